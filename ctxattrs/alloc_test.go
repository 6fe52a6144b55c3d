//go:build !race

// The race detector changes escape analysis: allocation counts are asserted
// only in the normal test run.

package ctxattrs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHookAllocations: Handle with the hook installed allocates no more
// than Handle without it, with no attributes in the context and with some
// (up to the FieldWriter's eight inline fields).
func TestHookAllocations(t *testing.T) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
	r.AddAttrs(slog.Int("k", 1))
	plain := asyncbus.NewHandler(io.Discard, nil)
	hooked := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer func() { require.NoError(t, plain.Close()); require.NoError(t, hooked.Close()) }()
	bg := context.Background()
	base := testing.AllocsPerRun(500, func() { _ = plain.Handle(bg, r) })
	assert.Equal(t, 0.0, base)
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"none set", bg},
		{"none set, other values", context.WithValue(bg, struct{ k int }{1}, "v")},
		{"three set", ctxattrs.With(bg, slog.String("a", "x"), slog.Int("b", 2), slog.Bool("c", true))},
		{"eight set", ctxattrs.With(bg, slog.Int("a", 1), slog.Int("b", 2), slog.Int("c", 3), slog.Int("d", 4),
			slog.Int("e", 5), slog.Int("f", 6), slog.Int("g", 7), slog.Int("h", 8))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, base, testing.AllocsPerRun(500, func() { _ = hooked.Handle(tc.ctx, r) }))
		})
	}
}

// TestFrameAllocations: Init allocates nothing on a parent without
// attributes, and once (the merged slice) on one with some.
func TestFrameAllocations(t *testing.T) {
	bg := context.Background()
	withA := ctxattrs.With(bg, slog.String("a", "x"))
	var f ctxattrs.Frame
	attr := slog.String("request_id", "r1")
	assert.Equal(t, 0.0, testing.AllocsPerRun(500, func() { _ = f.Init(bg, attr) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(500, func() { _ = f.Init(withA, attr) }))
}
