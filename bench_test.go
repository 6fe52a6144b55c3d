package asyncbus

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkHandle compares Handle alone (encode + enqueue; the write happens
// on the drainer) with slog.JSONHandler.Handle to io.Discard, on the
// reference record. Target: asyncbus at most 0.5x slog's ns/op, 0 allocs.
func BenchmarkHandle(b *testing.B) {
	r := referenceRecord()
	ctx := context.Background()
	b.Run("slog-json", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("asyncbus-json", func(b *testing.B) {
		h := NewHandler(io.Discard, nil)
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
}

// logReference makes the whole call through slog.Logger with the reference
// record's attributes.
func logReference(l *slog.Logger, i int) {
	l.LogAttrs(context.Background(), slog.LevelInfo, "request handled",
		slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"),
		slog.Int("status", 200),
		slog.Duration("latency", 1500*time.Microsecond),
		slog.Int64("bytes", 5120),
		slog.Bool("cache_hit", true),
		slog.Int("seq", i))
}

// BenchmarkLoggerFile measures the whole call through slog.Logger, JSON into
// a real file, until every byte is written (the flush is inside the timer).
// "parallel" runs 2 goroutines per GOMAXPROCS (4 on a 2-core machine).
// Target: asyncbus at least 3x slog.JSONHandler's records/s.
func BenchmarkLoggerFile(b *testing.B) {
	contestants := []struct {
		name string
		make func(f *os.File) (slog.Handler, func() error)
	}{
		{"slog-file", func(f *os.File) (slog.Handler, func() error) {
			return slog.NewJSONHandler(f, nil), func() error { return nil }
		}},
		{"asyncbus", func(f *os.File) (slog.Handler, func() error) {
			h := NewHandler(f, nil)
			return h, h.Close
		}},
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, c := range contestants {
			b.Run(mode+"/"+c.name, func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "bench.log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				h, done := c.make(f)
				l := slog.New(h)
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				if mode == "serial" {
					for i := 0; i < b.N; i++ {
						logReference(l, i)
					}
				} else {
					b.SetParallelism(2)
					b.RunParallel(func(pb *testing.PB) {
						i := 0
						for pb.Next() {
							logReference(l, i)
							i++
						}
					})
				}
				if err := done(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkEnabled compares the disabled-level check with slog's own: one
// atomic load against slog's Leveler call. Both allocate nothing.
func BenchmarkEnabled(b *testing.B) {
	ctx := context.Background()
	b.Run("slog-json", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Enabled(ctx, slog.LevelDebug)
		}
	})
	b.Run("asyncbus", func(b *testing.B) {
		h := NewHandler(io.Discard, nil)
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Enabled(ctx, slog.LevelDebug)
		}
	})
	b.Run("asyncbus-rules", func(b *testing.B) {
		h := NewHandler(io.Discard, &Options{Rules: MustParseLevelRules("info,db=warn")}).Named("db")
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Enabled(ctx, slog.LevelDebug)
		}
	})
}

// referenceRecord is the benchmark reference record (the ~200-byte
// access-log line); the benchmarks module holds the shared copy.
func referenceRecord() slog.Record {
	r := slog.NewRecord(time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(
		slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"),
		slog.Int("status", 200),
		slog.Duration("latency", 1500*time.Microsecond),
		slog.Int64("bytes", 5120),
		slog.Bool("cache_hit", true),
		slog.Int("seq", 42),
	)
	return r
}
