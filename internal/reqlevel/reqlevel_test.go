package reqlevel

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAllows(t *testing.T) {
	bg := context.Background()
	debug := With(bg, slog.LevelDebug)
	tests := []struct {
		name  string
		ctx   context.Context
		level slog.Level
		want  bool
	}{
		{"no level", bg, slog.LevelError, false},
		{"nil ctx", nil, slog.LevelError, false},
		{"below the request level", debug, slog.LevelDebug - 1, false},
		{"at the request level", debug, slog.LevelDebug, true},
		{"above the request level", debug, slog.LevelInfo, true},
		{"inner With replaces outer", With(debug, slog.LevelWarn), slog.LevelInfo, false},
		{"inner With lowers again", With(With(bg, slog.LevelWarn), slog.LevelDebug), slog.LevelDebug, true},
		//lint:ignore SA1012 a nil parent is documented
		{"nil parent", With(nil, slog.LevelDebug), slog.LevelDebug, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Allows(tc.ctx, tc.level))
		})
	}
}

func TestForgetIgnoresLevelsUntilNextWith(t *testing.T) {
	ctx := With(context.Background(), slog.LevelDebug)
	assert.True(t, Used())
	Forget()
	t.Cleanup(func() { used.Store(true) }) // other tests expect levels honoured
	assert.False(t, Used())
	assert.False(t, Allows(ctx, slog.LevelDebug), "ignored while unused")
	l, ok := From(ctx)
	assert.True(t, ok, "From still reads the context")
	assert.Equal(t, slog.LevelDebug, l)
	_ = With(context.Background(), slog.LevelInfo)
	assert.True(t, Allows(ctx, slog.LevelDebug), "honoured again after a With")
}
