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

// BenchmarkReplaceAttr measures the Redactor alone on one attribute, two
// groups deep, with refConfig (2 keys, 2 paths, bearer and JWT matchers).
func BenchmarkReplaceAttr(b *testing.B) {
	r := redact.New(refConfig)
	groups := []string{"req", "headers"}
	for _, bc := range []struct {
		name string
		a    slog.Attr
	}{
		{"clean-string", slog.String("User-Agent", "curl/8.5.0 (x86_64-pc-linux-gnu)")},
		{"clean-int", slog.Int("status", 200)},
		{"key-match", slog.String("Password", "hunter2")},
		{"path-match", slog.String("authorization", "Basic x")},
		{"bearer-in-value", slog.String("x-upstream", "Bearer abc.def")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.ReplaceAttr(groups, bc.a)
			}
		})
	}
}
