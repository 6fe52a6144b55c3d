package benchmarks

import (
	"context"
	"io"
	"log/slog"
	"testing"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
	"github.com/asyncbus/asyncbus/encode"
)

// BenchmarkHandleReference compares the cost of one Handle call on the
// reference record (encode issue: the ~200-byte access-log line) for each
// library's slog handler writing to io.Discard, so that only encoding and
// the handler's own bookkeeping are measured. asyncbus's Handle includes
// the enqueue onto its ring; its drainer writes to io.Discard on another
// goroutine. asyncbus-encoder is the encoder alone (encode.Encoder.Append
// into a reused buffer), the part that compares with the others' encoding.
func BenchmarkHandleReference(b *testing.B) {
	r := harness.ReferenceRecord()
	ctx := context.Background()
	handlers := []struct {
		name string
		make func() (slog.Handler, func())
	}{
		{"slog-json", func() (slog.Handler, func()) { return slog.NewJSONHandler(io.Discard, nil), func() {} }},
		{"asyncbus-json", func() (slog.Handler, func()) {
			h := asyncbus.NewHandler(io.Discard, nil)
			return h, func() { _ = h.Close() }
		}},
		{"zerolog-slog", func() (slog.Handler, func()) {
			return zerolog.NewSlogHandler(zerolog.New(io.Discard)), func() {}
		}},
		{"phuslu-slog", func() (slog.Handler, func()) {
			l := &plog.Logger{Level: plog.InfoLevel, Writer: plog.IOWriter{Writer: io.Discard}}
			return l.Slog().Handler(), func() {}
		}},
		{"zapslog", func() (slog.Handler, func()) {
			core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
			return zapslog.NewHandler(core), func() {}
		}},
	}
	b.Run("asyncbus-encoder", func(b *testing.B) {
		e := encode.New(encode.Options{})
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf = e.Append(buf[:0], r, nil)
		}
	})
	for _, hh := range handlers {
		b.Run(hh.name, func(b *testing.B) {
			h, done := hh.make()
			defer done()
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(ctx, r)
			}
		})
	}
}

// BenchmarkEncodeReference compares asyncbus's encoders alone (Append into a
// reused buffer) with the standard handlers on the reference record: JSON
// against slog's JSONHandler, Text and Logfmt against its TextHandler.
func BenchmarkEncodeReference(b *testing.B) {
	r := harness.ReferenceRecord()
	ctx := context.Background()
	encoder := func(f encode.Format) func(b *testing.B) {
		return func(b *testing.B) {
			e := encode.New(encode.Options{Format: f})
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				buf = e.Append(buf[:0], r, nil)
			}
			b.SetBytes(int64(len(buf)))
		}
	}
	handler := func(h slog.Handler) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(ctx, r)
			}
		}
	}
	b.Run("JSON", encoder(encode.JSON))
	b.Run("SlogJSON", handler(slog.NewJSONHandler(io.Discard, nil)))
	b.Run("Text", encoder(encode.Text))
	b.Run("Logfmt", encoder(encode.Logfmt))
	b.Run("SlogText", handler(slog.NewTextHandler(io.Discard, nil)))
	b.Run("Console", encoder(encode.Console))
}
