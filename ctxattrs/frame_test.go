package ctxattrs_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type otherKey struct{}

// TestFrameInit: a Frame carries what With(parent, a) carries, for every
// kind of parent and attribute.
func TestFrameInit(t *testing.T) {
	bg := context.Background()
	withAB := ctxattrs.With(bg, slog.String("a", "1"), slog.String("b", "2"))
	for _, tc := range []struct {
		name   string
		parent context.Context
		attr   slog.Attr
	}{
		{"no parent attributes", bg, slog.String("request_id", "r1")},
		{"nil parent", nil, slog.String("request_id", "r1")},
		{"parent attributes", withAB, slog.String("request_id", "r1")},
		{"duplicate key", withAB, slog.String("a", "new")},
		{"inlined group", bg, slog.Group("", slog.Int("x", 1), slog.Int("y", 2))},
		{"inlined group, parent attributes", withAB, slog.Group("", slog.Int("b", 3))},
		{"empty attribute", withAB, slog.Attr{}},
		{"empty attribute, no parent attributes", bg, slog.Attr{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f ctxattrs.Frame
			got := f.Init(tc.parent, tc.attr)
			want := ctxattrs.With(tc.parent, tc.attr)
			assert.Equal(t, ctxattrs.From(want), ctxattrs.From(got))
			more := slog.Int("later", 9)
			assert.Equal(t, ctxattrs.From(ctxattrs.With(want, more)), ctxattrs.From(ctxattrs.With(got, more)),
				"a With on top of the Frame merges as on With's context")
		})
	}
}

// TestFrameFields: the Fields hook writes a Frame's attributes into every
// record logged with it.
func TestFrameFields(t *testing.T) {
	var f ctxattrs.Frame
	ctx := f.Init(ctxattrs.With(context.Background(), slog.Int("user", 7)), slog.String("request_id", "r1"))
	lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) { l.InfoContext(ctx, "a") })
	assert.Equal(t, []string{`{"level":"INFO","msg":"a","user":7,"request_id":"r1"}`}, lines)
}

// TestFrameParent: a Frame's deadline, cancellation and other values are
// its parent's.
func TestFrameParent(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), otherKey{}, "v"), deadline)
	var f ctxattrs.Frame
	ctx := f.Init(parent, slog.String("request_id", "r1"))
	d, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.Equal(t, deadline, d)
	assert.Equal(t, "v", ctx.Value(otherKey{}))
	assert.NoError(t, ctx.Err())
	cancel()
	select {
	case <-ctx.Done():
	default:
		require.Fail(t, "the parent's cancellation reaches the Frame")
	}
	assert.True(t, errors.Is(ctx.Err(), context.Canceled))
}
