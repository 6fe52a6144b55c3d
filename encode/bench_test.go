package encode

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

func benchEncoder(b *testing.B, f Format) {
	e := New(Options{Format: f})
	r := ReferenceRecord()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.Append(buf[:0], r, nil)
	}
	b.SetBytes(int64(len(buf)))
}

func benchSlog(b *testing.B, h slog.Handler) {
	r := ReferenceRecord()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = h.Handle(ctx, r)
	}
}

// BenchmarkReference compares the encoders with the standard handlers on
// the reference record (ratios: JSON vs SlogJSON, Text and Logfmt vs SlogText).
func BenchmarkReference(b *testing.B) {
	b.Run("JSON", func(b *testing.B) { benchEncoder(b, JSON) })
	b.Run("SlogJSON", func(b *testing.B) { benchSlog(b, slog.NewJSONHandler(io.Discard, nil)) })
	b.Run("Text", func(b *testing.B) { benchEncoder(b, Text) })
	b.Run("Logfmt", func(b *testing.B) { benchEncoder(b, Logfmt) })
	b.Run("SlogText", func(b *testing.B) { benchSlog(b, slog.NewTextHandler(io.Discard, nil)) })
	b.Run("Console", func(b *testing.B) { benchEncoder(b, Console) })
}

// BenchmarkDerived measures a logger with a name, WithAttrs/WithGroup state
// and per-call extra attributes.
func BenchmarkDerived(b *testing.B) {
	extra := []slog.Attr{slog.String("trace_id", "0af7651916cd43dd8448eb211c80319c"), slog.String("span_id", "b7ad6b7169203331")}
	for _, f := range []Format{JSON, Text, Logfmt} {
		e := New(Options{Format: f}).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
		r := ReferenceRecord()
		buf := make([]byte, 0, 1024)
		b.Run([]string{"JSON", "Text", "Logfmt"}[f], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = e.Append(buf[:0], r, extra)
			}
		})
	}
}

func BenchmarkKinds(b *testing.B) {
	e := New(Options{Format: JSON, AddSource: true})
	r := record(fixedTime, slog.LevelWarn, "kinds", callerPC(), fastKindAttrs())
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.Append(buf[:0], r, nil)
	}
}
