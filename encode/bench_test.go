package encode

import (
	"log/slog"
	"testing"
)

// BenchmarkDerived measures a logger with a name, WithAttrs/WithGroup state
// and per-call extra attributes.
func BenchmarkDerived(b *testing.B) {
	extra := []slog.Attr{slog.String("trace_id", "0af7651916cd43dd8448eb211c80319c"), slog.String("span_id", "b7ad6b7169203331")}
	for _, f := range []Format{JSON, Text, Logfmt} {
		e := New(Options{Format: f}).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
		r := record(fixedTime, slog.LevelInfo, "request handled", 0, accessLogAttrs())
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

// BenchmarkPresets compares the cloud presets with plain JSON on the
// derived logger of BenchmarkDerived, with source.
func BenchmarkPresets(b *testing.B) {
	extra := []slog.Attr{slog.String("trace_id", "0af7651916cd43dd8448eb211c80319c"), slog.String("span_id", "b7ad6b7169203331")}
	for _, f := range []Format{JSON, GCPJSON, ECSJSON, DatadogJSON} {
		e := New(Options{Format: f, AddSource: true}).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
		r := record(fixedTime, slog.LevelInfo, "request handled", callerPC(), accessLogAttrs())
		buf := make([]byte, 0, 1024)
		b.Run(map[Format]string{JSON: "JSON", GCPJSON: "GCPJSON", ECSJSON: "ECSJSON", DatadogJSON: "DatadogJSON"}[f], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = e.Append(buf[:0], r, extra)
			}
		})
	}
}

// BenchmarkUniqueKeys measures Options.UniqueKeys on the derived logger of
// BenchmarkDerived: off, on with no repeated key, and on with the record
// repeating one of its keys (the line is then rewritten; a repeat of a
// WithAttrs key is found and rewritten the same way).
func BenchmarkUniqueKeys(b *testing.B) {
	plain := record(fixedTime, slog.LevelInfo, "request handled", 0, accessLogAttrs())
	dup := record(fixedTime, slog.LevelInfo, "request handled", 0, append(accessLogAttrs(), slog.Int("status", 304)))
	for _, f := range []Format{JSON, Text, Logfmt} {
		for _, c := range []struct {
			name   string
			unique bool
			r      slog.Record
		}{{"off", false, plain}, {"on", true, plain}, {"on-repeats", true, dup}} {
			e := New(Options{Format: f, UniqueKeys: c.unique}).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
			buf := make([]byte, 0, 1024)
			b.Run([]string{"JSON", "Text", "Logfmt"}[f]+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					buf = e.Append(buf[:0], c.r, nil)
				}
			})
		}
	}
}
