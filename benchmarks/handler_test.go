package benchmarks

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// BenchmarkHandle compares Handle alone (encode + enqueue; the write happens
// on the drainer) with slog.JSONHandler.Handle to io.Discard, on the
// reference record. Target: asyncbus at most 0.5x slog's ns/op, 0 allocs.
func BenchmarkHandle(b *testing.B) {
	r := harness.ReferenceRecord()
	ctx := context.Background()
	b.Run("slog-json", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("asyncbus-json", func(b *testing.B) {
		h := asyncbus.NewHandler(io.Discard, nil)
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
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
			h := asyncbus.NewHandler(f, nil)
			return h, h.Close
		}},
		// asyncbus whose Block room wait has a deadline of its own.
		{"asyncbus-blocktimeout", func(f *os.File) (slog.Handler, func() error) {
			h := asyncbus.NewHandler(f, &asyncbus.Options{Ring: asyncbus.RingOptions{BlockTimeout: time.Hour}})
			return h, h.Close
		}},
		// The floor: slog.Logger's own cost (record building, runtime.Callers)
		// with a handler that does nothing; asyncbus's share of a call is its
		// ns/op minus this one.
		{"noop", func(*os.File) (slog.Handler, func() error) {
			return noopHandler{}, func() error { return nil }
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
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				if mode == "serial" {
					for i := 0; i < b.N; i++ {
						harness.LogReference(ctx, l, i)
					}
				} else {
					b.SetParallelism(2)
					b.RunParallel(func(pb *testing.PB) {
						i := 0
						for pb.Next() {
							harness.LogReference(ctx, l, i)
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

// noopHandler accepts every record and does nothing with it.
type noopHandler struct{}

func (noopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (noopHandler) Handle(context.Context, slog.Record) error { return nil }
func (n noopHandler) WithAttrs([]slog.Attr) slog.Handler      { return n }
func (n noopHandler) WithGroup(string) slog.Handler           { return n }

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
		h := asyncbus.NewHandler(io.Discard, nil)
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Enabled(ctx, slog.LevelDebug)
		}
	})
	b.Run("asyncbus-rules", func(b *testing.B) {
		h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Rules: asyncbus.MustParseLevelRules("info,db=warn")}).Named("db")
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Enabled(ctx, slog.LevelDebug)
		}
	})
}
