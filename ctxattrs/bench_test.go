package ctxattrs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
)

// BenchmarkHandle measures Handle into io.Discard: "off" without the hook
// installed, then with ctxattrs.Fields and a context carrying 0 or 3 attrs.
func BenchmarkHandle(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200))
	bg := context.Background()
	three := ctxattrs.With(bg, slog.String("request_id", "r-42"), slog.String("user", "ann"), slog.Int("tenant", 7))
	for _, bc := range []struct {
		name string
		hook ctxattrs.Hook
		ctx  context.Context
	}{
		{"off", nil, three},
		{"on/none-set", ctxattrs.Fields, bg},
		{"on/3-attrs", ctxattrs.Fields, three},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: bc.hook}})
			defer h.Close()
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(bc.ctx, r)
			}
		})
	}
}

// BenchmarkWith measures deriving a context with two more attributes from
// one that carries three.
func BenchmarkWith(b *testing.B) {
	ctx := ctxattrs.With(context.Background(), slog.String("request_id", "r-42"), slog.String("user", "ann"), slog.Int("tenant", 7))
	b.ReportAllocs()
	for b.Loop() {
		_ = ctxattrs.With(ctx, slog.Int("attempt", 2), slog.String("step", "db"))
	}
}
