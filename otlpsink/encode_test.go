package otlpsink

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

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

// slogJSONValue is the text slog.JSONHandler writes for the attribute
// err=v, decoded from JSON.
func slogJSONValue(t *testing.T, v any) string {
	t.Helper()
	var sb strings.Builder
	slog.New(slog.NewJSONHandler(&sb, &slog.HandlerOptions{ReplaceAttr: dropBuiltins})).Info("", "err", v)
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(sb.String()), &m), sb.String())
	return m["err"]
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
			require.NotEmpty(t, recs[0].Attrs)
			got := recs[0].Attrs[0] // an error at the top level is the record's exception.message
			if _, isErr := tc.v.(error); isErr {
				assert.Equal(t, "exception.message", got.Key)
			}
			assert.Equal(t, tc.want, got.Value)
			if tc.slog {
				assert.Equal(t, tc.want.Str, slogJSONValue(t, tc.v), "slog's own text")
			}
		})
	}
}

// TestInvalidUTF8IsReplacedAsSlogDoes: proto3 strings must be valid UTF-8
// (google.golang.org/protobuf refuses the whole request otherwise), so
// every string field gets each invalid byte replaced with U+FFFD, the text
// slog.JSONHandler writes for the same input.
func TestInvalidUTF8IsReplacedAsSlogDoes(t *testing.T) {
	inputs := map[string]string{
		"stray bytes":         "file \xff\xfe",
		"truncated sequence":  "/tmp/\xc3",
		"half a 3-byte rune":  "a\xe2\x82b",
		"surrogate half":      "\xed\xa0\x80",
		"valid U+FFFD kept":   "ok \uFFFD",
		"valid multibyte":     "héllo ✓",
		"invalid after valid": "é\x80",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want := slogJSONValue(t, in)
			require.True(t, utf8.ValidString(want), "slog's text %q", want)
			rc := newReceiver(t)
			o := testOptions(rc)
			o.Resource = []slog.Attr{slog.String("service.name", in)}
			o.ScopeName = in
			s, err := NewSink(o)
			require.NoError(t, err)
			h, err := s.NewHandler(nil)
			require.NoError(t, err)
			slog.New(h).Info(in, in, in, "list", []string{in}, "err", errors.New(in), slog.Group("g", slog.Group(in, "k", in)))
			require.NoError(t, h.Flush())       // the handler's request first
			_, err = s.Write([]byte(in + "\n")) // a foreign record: its text is the body
			require.NoError(t, err)
			require.NoError(t, h.Close())
			reqs := rc.requests()
			require.Len(t, reqs, 2)
			for _, r := range reqs {
				assert.Equal(t, want, r.ScopeName)
				assert.Equal(t, []pbKV{{Key: "service.name", Value: str(want)}}, r.Resource)
			}
			require.Len(t, reqs[0].Records, 1)
			rec := reqs[0].Records[0]
			assert.Equal(t, str(want), rec.Body)
			assert.Equal(t, []pbKV{
				{Key: want, Value: str(want)},
				{Key: "list", Value: pbValue{Kind: "array", Arr: []pbValue{str(want)}}},
				{Key: "g", Value: kvl(pbKV{Key: want, Value: kvl(pbKV{Key: "k", Value: str(want)})})},
				{Key: "exception.message", Value: str(want)},
				{Key: "exception.type", Value: str("*errors.errorString")},
			}, rec.Attrs)
			require.Len(t, reqs[1].Records, 1)
			assert.Equal(t, str(want), reqs[1].Records[0].Body)
		})
	}
}
