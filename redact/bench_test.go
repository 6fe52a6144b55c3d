package redact_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/redact"
)

// BenchmarkHandle measures an asyncbus Handle into io.Discard of a record
// with six attributes (one group): "off" without a ReplaceAttr (redaction
// not installed), "on" with the Redactor, on a record that has nothing to
// redact and on one with a key, a path and a bearer token to mask.
// "identity-replaceattr" separates the handler's cost of calling any
// ReplaceAttr (its slower general path) from the Redactor's own.
func BenchmarkHandle(b *testing.B) {
	clean := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	clean.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200), slog.String("user", "ann"),
		slog.Group("req", slog.Group("headers", slog.String("Accept", "*/*"), slog.String("User-Agent", "curl/8"))),
		slog.Duration("took", time.Millisecond))
	secret := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	secret.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200), slog.String("password", "hunter2"),
		slog.Group("req", slog.Group("headers", slog.String("Authorization", "Basic x"), slog.String("X-Upstream", "Bearer abc.def"))),
		slog.Duration("took", time.Millisecond))
	r := redact.New(refConfig)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		rep  func([]string, slog.Attr) slog.Attr
		rec  slog.Record
	}{
		{"off", nil, clean},
		// A ReplaceAttr that changes nothing: the handler's own cost of
		// calling one, which any ReplaceAttr pays.
		{"identity-replaceattr", func(_ []string, a slog.Attr) slog.Attr { return a }, clean},
		{"on/clean", r.ReplaceAttr, clean},
		{"on/3-secrets", r.ReplaceAttr, secret},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{ReplaceAttr: bc.rep})
			defer h.Close()
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(ctx, bc.rec)
			}
		})
	}
}
