package logwriter

import (
	"io"
	"log"
	"testing"
)

// benchLine is a zerolog line of the benchmarks' reference record.
var benchLine = []byte(`{"level":"info","method":"GET","path":"/api/v1/users/12345/orders","status":200,"latency":1.5,"bytes":5120,"cache_hit":true,"seq":42,"time":"2026-12-02T07:48:48Z","message":"request handled"}` + "\n")

// BenchmarkWrite is the Writer's own cost per line: a logger's encoded
// line into a Writer on io.Discard (the drainer's writes cost nothing).
func BenchmarkWrite(b *testing.B) {
	for _, tc := range []struct {
		name string
		line []byte
	}{
		{"level-read", benchLine},
		{"no-level", []byte("2026/12/02 07:48:48 request handled method=GET path=/api/v1/users/12345/orders status=200\n")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := New(io.Discard, nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = w.Write(tc.line)
				}
			})
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkStandardLog is log.Print into a Writer, against log.Print into
// io.Discard: what the Writer (the stack read for log.Fatal included) adds.
func BenchmarkStandardLog(b *testing.B) {
	b.Run("discard", func(b *testing.B) {
		l := log.New(io.Discard, "", log.LstdFlags)
		for b.Loop() {
			l.Print("request handled")
		}
	})
	b.Run("writer", func(b *testing.B) {
		w := New(io.Discard, nil)
		l := log.New(w, "", log.LstdFlags)
		for b.Loop() {
			l.Print("request handled")
		}
		b.StopTimer()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkLineLevel is reading a line's level: a zerolog line (level
// first) and a logrus JSON line whose sorted keys put a long error first.
func BenchmarkLineLevel(b *testing.B) {
	logrus := []byte(`{"error":"dial tcp 10.0.0.1:5432: connect: connection refused; retried 5 times over 30s, giving up on the primary and failing over to the replica at 10.0.0.2:5432 which also refused","level":"error","msg":"database unreachable","time":"2026-12-02T07:48:48Z"}` + "\n")
	for _, tc := range []struct {
		name string
		line []byte
	}{{"zerolog", benchLine}, {"logrus-error", logrus}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = lineLevel(tc.line)
			}
		})
	}
}
