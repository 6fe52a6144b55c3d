package otlpsink

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// derefErr is an error whose Error method dereferences its receiver, the
// common shape of a typed nil *T stored in an error interface.
type derefErr struct{ msg string }

func (e *derefErr) Error() string { return e.msg }

// panicErr is an error whose Error method panics on a valid receiver.
type panicErr struct{}

func (panicErr) Error() string { panic("boom") }

// slogJSONValue is what slog.JSONHandler writes for the attribute err=v.
func slogJSONValue(t *testing.T, v any) string {
	t.Helper()
	var sb strings.Builder
	slog.New(slog.NewJSONHandler(&sb, &slog.HandlerOptions{ReplaceAttr: dropBuiltins})).Info("", "err", v)
	s := strings.TrimSpace(sb.String())
	require.True(t, strings.HasPrefix(s, `{"err":"`) && strings.HasSuffix(s, `"}`), s)
	return strings.TrimSuffix(strings.TrimPrefix(s, `{"err":"`), `"}`)
}

func dropBuiltins(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
		return slog.Attr{}
	}
	return a
}

func TestErrorWhoseErrorPanicsIsWrittenAsSlogDoes(t *testing.T) {
	var nilPtr *derefErr
	cases := map[string]struct {
		v    any
		want pbValue
		slog bool // want is also slog.JSONHandler's text for v
	}{
		"typed nil pointer error":   {v: error(nilPtr), want: str("<nil>"), slog: true},
		"Error panics":              {v: error(panicErr{}), want: str("!PANIC: boom"), slog: true},
		"working error":             {v: errors.New("fine"), want: str("fine"), slog: true},
		"typed nil inside []any":    {v: []any{error(nilPtr)}, want: pbValue{Kind: "array", Arr: []pbValue{str("<nil>")}}},
		"typed nil in fmt fallback": {v: struct{ E error }{nilPtr}, want: str("{E:<nil>}")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t)
			h, err := NewHandler(testOptions(rc), nil)
			require.NoError(t, err)
			require.NotPanics(t, func() { slog.New(h).Info("m", "err", tc.v) })
			require.NoError(t, h.Close())
			recs := rc.records()
			require.Len(t, recs, 1)
			require.Len(t, recs[0].Attrs, 1)
			assert.Equal(t, tc.want, recs[0].Attrs[0].Value)
			if tc.slog {
				assert.Equal(t, tc.want.Str, slogJSONValue(t, tc.v), "slog's own text")
			}
		})
	}
}
