package logrbridge

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

// Tests of context.go: WithContext hands ctx to the handler, so that a
// request level (ctxattrs.WithLevel) applies to V levels.

func TestWithContextHonoursTheRequestLevel(t *testing.T) {
	debug := ctxattrs.WithLevel(context.Background(), slog.LevelDebug)
	tests := []struct {
		name string
		ctx  context.Context
		v    int
		want bool
	}{
		{"no context: V(0)", nil, 0, true},
		{"no context: V(1)", nil, 1, false},
		{"no request level: V(1)", context.Background(), 1, false},
		{"request debug: V(1)", debug, 1, true},
		{"request debug: V(4)", debug, 4, true},
		{"request debug: V(5) below", debug, 5, false},
		{"request V(5)", ctxattrs.WithLevel(context.Background(), -5), 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			h := asyncbus.NewHandler(&buf, nil)
			l := NewLogger(h)
			if tc.ctx != nil {
				l = WithContext(l, tc.ctx)
			}
			assert.Equal(t, tc.want, l.V(tc.v).Enabled(), "Enabled")
			l.V(tc.v).Info("m")
			require.NoError(t, h.Close())
			if tc.want {
				assert.Len(t, lines(t, buf.String()), 1)
			} else {
				assert.Empty(t, buf.String())
			}
		})
	}
}

func TestWithContextKeptByDerivedLoggersAndWritesContextFields(t *testing.T) {
	var buf syncbuf.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}, Rules: asyncbus.MustParseLevelRules("info,ctrl=warn")})
	ctx := ctxattrs.WithLevel(ctxattrs.With(context.Background(), slog.String("request_id", "r-1")), slog.LevelDebug)
	base := NewLogger(h).WithName("ctrl")
	base.V(1).Info("hidden: no context, and ctrl=warn")
	l := WithContext(base.V(1), ctx) // the V level is kept
	l.Info("v1")
	l.WithValues("k", 1).WithName("sub").Info("derived")
	l.Error(errors.New("boom"), "failed")
	require.NoError(t, Close(l))
	got := lines(t, buf.String())
	require.Len(t, got, 3, buf.String())
	for i, want := range []struct{ msg, logger, level string }{
		{"v1", "ctrl", "DEBUG+3"},
		{"derived", "ctrl.sub", "DEBUG+3"},
		{"failed", "ctrl", "ERROR"},
	} {
		assert.Equal(t, want.msg, got[i]["msg"])
		assert.Equal(t, want.logger, got[i]["logger"])
		assert.Equal(t, want.level, got[i]["level"])
		assert.Equal(t, "r-1", got[i]["request_id"], "the Context hook saw ctx")
	}
}

func TestWithContextThroughForwardingSinkAndForeignSinks(t *testing.T) {
	var buf syncbuf.Buffer
	h := asyncbus.NewHandler(&buf, nil)
	ctx := ctxattrs.WithLevel(context.Background(), slog.LevelDebug)
	wrapped := logr.New(forwardingSink{NewLogger(h).GetSink()})
	l := WithContext(wrapped, ctx)
	assert.True(t, l.V(2).Enabled(), "reached the sink behind the forwarding one")
	require.NoError(t, Close(l))

	d := logr.Discard()
	assert.Equal(t, d, WithContext(d, ctx), "a foreign logger is returned unchanged")
	assert.Equal(t, logr.Logger{}, WithContext(logr.Logger{}, ctx), "so is a zero logger")
}
