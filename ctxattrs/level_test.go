package ctxattrs_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/asyncbus/asyncbus/ctxattrs"
)

func TestLevelReturnsWhatWithLevelSet(t *testing.T) {
	bg := context.Background()
	debug := ctxattrs.WithLevel(bg, slog.LevelDebug)
	tests := []struct {
		name   string
		ctx    context.Context
		want   slog.Level
		wantOK bool
	}{
		{"none", bg, 0, false},
		{"set", debug, slog.LevelDebug, true},
		{"inner wins", ctxattrs.WithLevel(debug, slog.LevelWarn), slog.LevelWarn, true},
		{"kept below attributes", ctxattrs.With(debug, slog.Int("a", 1)), slog.LevelDebug, true},
		//lint:ignore SA1012 a nil ctx is documented as context.Background()
		{"nil parent", ctxattrs.WithLevel(nil, slog.LevelInfo), slog.LevelInfo, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ctxattrs.Level(tc.ctx)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWithLevelLetsTheRequestsDebugThrough(t *testing.T) {
	ctx := ctxattrs.WithLevel(ctxattrs.With(context.Background(), slog.String("req", "r1")), slog.LevelDebug)
	lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) {
		l.DebugContext(context.Background(), "hidden")
		l.DebugContext(ctx, "shown")
		l.With("w", 1).WithGroup("g").DebugContext(ctx, "derived", "k", 2)
		l.Log(ctx, slog.LevelDebug-1, "below the request level")
	})
	assert.Equal(t, []string{
		`{"level":"DEBUG","msg":"shown","req":"r1"}`,
		`{"level":"DEBUG","msg":"derived","req":"r1","w":1,"g":{"k":2}}`,
	}, lines)
}
