package asyncbustest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/asyncbustest"
)

// discardTB is a test whose log goes nowhere, so that the benchmark
// measures the handler and not the testing package's output.
type discardTB struct{ testing.TB }

func (discardTB) Output() io.Writer { return io.Discard }
func (discardTB) Log(...any)        {}
func (discardTB) Helper()           {}

// BenchmarkHandle: "off" is a plain asyncbus handler (nothing installed);
// "on" is the test handler, which writes each record synchronously (a
// flush per record) under one lock; "recorder" is Recorder.Handle.
func BenchmarkHandle(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200))
	ctx := context.Background()
	b.Run("off", func(b *testing.B) {
		h := asyncbus.NewHandler(io.Discard, nil)
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("on", func(b *testing.B) {
		h := asyncbustest.NewHandler(discardTB{b}, &asyncbus.Options{})
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("recorder", func(b *testing.B) {
		h := asyncbustest.NewRecorder()
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Handle(ctx, r)
			if h.Len() >= 1<<16 {
				h.Reset() // bound memory; amortised
			}
		}
	})
}
