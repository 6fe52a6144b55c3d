package logrbridge

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// valueStringer has a value receiver: a nil *valueStringer panics in the
// method wrapper the compiler makes for the pointer type.
type valueStringer struct{ n int }

func (v valueStringer) String() string { return fmt.Sprint("n=", v.n) }

// pointerError dereferences its receiver without a nil check.
type pointerError struct{ msg string }

func (e *pointerError) Error() string { return e.msg }

// errorStringer is an error and a fmt.Stringer.
type errorStringer struct{}

func (errorStringer) Error() string  { return "as error" }
func (errorStringer) String() string { return "as stringer" }

// marshalsToPanicStringer returns a value whose String panics.
type marshalsToPanicStringer struct{}

func (marshalsToPanicStringer) MarshalLog() any { return panicStringer{} }

// intPanicker panics with a value that is not a string or error, where
// zapr's %s and zap's %v differ.
type intPanicker struct{}

func (intPanicker) MarshalLog() any { panic(42) }
func (intPanicker) String() string  { panic(42) }

func TestZaprValuesFollowZapRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		want  string // the fields in place of the pair "v", value
	}{
		{"stringer", stringerOnly{"a"}, `"v":"S:a"`},
		{"panicking String", panicStringer{}, `"vError":"PANIC=string boom"`},
		{"panicking String, non-string panic", struct{ fmt.Stringer }{intPanicker{}}, `"vError":"PANIC=42"`},
		{"nil pointer String", (*nilStringer)(nil), `"v":"<nil>"`},
		{"nil pointer to value-receiver String", (*valueStringer)(nil), `"v":"<nil>"`},
		{"panicking Error", panicError{}, `"vError":"PANIC=error boom"`},
		{"nil pointer Error", (*pointerError)(nil), `"v":"<nil>"`},
		{"error before stringer", errorStringer{}, `"v":"as error"`},
		{"panicking MarshalLog", panicker{}, `"vError":"PANIC=marshal boom"`},
		{"panicking MarshalLog, non-string panic (zapr's %s)", intPanicker{}, `"vError":"PANIC=%!s(int=42)"`},
		{"MarshalLog result follows the same rules", marshalsToPanicStringer{}, `"vError":"PANIC=string boom"`},
		{"MarshalLog before String", marshalerStringer{}, `"v":"from MarshalLog"`},
		{"plain value untouched", 3, `"v":3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "WithValues"} {
				h, buf := jsonHandler(slog.LevelInfo)
				l := NewLogger(h, Zapr(true))
				require.NotPanics(t, func() {
					if via == "Info" {
						l.Info("m", "v", tc.value, "after", 1)
					} else {
						l.WithValues("v", tc.value, "after", 1).Info("m")
					}
				})
				assert.True(t, strings.HasSuffix(strings.TrimSpace(buf.String()), `"msg":"m",`+tc.want+`,"after":1}`), "%s: %s", via, buf.String())
			}
		})
	}
}

func TestZaprErrorKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		err  error
		want map[string]any
	}{
		{"panicking Error", []Option{Zapr(true)}, panicError{}, map[string]any{"errorError": "PANIC=error boom"}},
		{"nil pointer Error", []Option{Zapr(true)}, (*pointerError)(nil), map[string]any{"error": "<nil>"}},
		{"custom key", []Option{Zapr(true), ErrorKey("err")}, panicError{}, map[string]any{"errError": "PANIC=error boom"}},
		{"without Zapr", nil, (*pointerError)(nil), map[string]any{"error": "<panic: runtime error: invalid memory address or nil pointer dereference>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, buf := jsonHandler(slog.LevelInfo)
			require.NotPanics(t, func() { NewLogger(h, tc.opts...).Error(tc.err, "m") })
			m := one(t, buf.String())
			for k, v := range tc.want {
				assert.Equal(t, v, m[k], k)
			}
			assert.Len(t, m, 4+len(tc.want)) // time, level, source, msg
		})
	}
}

func TestZaprCapsVAt127(t *testing.T) {
	for _, tc := range []struct {
		name         string
		zapr         bool
		handlerLevel slog.Level
		v            int
		enabled      bool
		wantLevel    slog.Level
	}{
		{"V(127) at -127", true, -127, 127, true, -127},
		{"V(200) is V(127)", true, -127, 200, true, -127},
		{"V(1000) is V(127)", true, -127, 1000, true, -127},
		{"V(126) below -126", true, -126, 126, true, -126},
		{"V(200) not at -126", true, -126, 200, false, 0},
		{"without Zapr V(200) is -200", false, -127, 200, false, 0},
		{"without Zapr at -200", false, -200, 200, true, -200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, buf := jsonHandler(tc.handlerLevel)
			l := NewLogger(h, Zapr(tc.zapr)).V(tc.v)
			assert.Equal(t, tc.enabled, l.Enabled())
			l.Info("m")
			if !tc.enabled {
				assert.Empty(t, buf.String())
				return
			}
			assert.Equal(t, tc.wantLevel.String(), one(t, buf.String())["level"])
		})
	}
}

func TestFieldConverter(t *testing.T) {
	special := errors.New("special")
	conv := func(key string, v any) (slog.Attr, bool) {
		switch v {
		case special:
			// An empty-key group: two fields in place of the pair.
			return slog.Attr{Value: slog.GroupValue(slog.String(key, "converted"), slog.Bool(key+"Special", true))}, true
		case any(panicker{}):
			panic("converter boom")
		}
		return slog.Attr{}, false
	}
	for _, tc := range []struct {
		name  string
		opts  []Option
		value any
		want  string
	}{
		{"several fields", []Option{FieldConverter(conv)}, special, `"v":"converted","vSpecial":true`},
		{"not converted", []Option{FieldConverter(conv)}, errors.New("other"), `"v":"other"`},
		{"panic", []Option{FieldConverter(conv)}, panicker{}, `"v":"<panic: converter boom>"`},
		{"ValueConverter keeps the key", []Option{ValueConverter(func(any) (slog.Value, bool) { return slog.IntValue(7), true })}, special, `"v":7`},
		{"last converter wins", []Option{ValueConverter(func(any) (slog.Value, bool) { return slog.IntValue(7), true }), FieldConverter(conv)}, special, `"v":"converted","vSpecial":true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "WithValues"} {
				h, buf := jsonHandler(slog.LevelInfo)
				l := NewLogger(h, tc.opts...)
				if via == "Info" {
					l.Info("m", "v", tc.value)
				} else {
					l.WithValues("v", tc.value).Info("m")
				}
				assert.True(t, strings.HasSuffix(strings.TrimSpace(buf.String()), `"msg":"m",`+tc.want+`}`), "%s: %s", via, buf.String())
			}
		})
	}
}

func TestZaprMisuseWritesDPanicLine(t *testing.T) {
	const (
		odd       = "odd number of arguments passed as key-value pairs for logging"
		nonString = "non-string key argument passed to logging, ignoring all later arguments"
	)
	for _, tc := range []struct {
		name     string
		kv       []any
		misuse   map[string]any // the DPanic line's message and attribute
		kept     map[string]any // the record's pairs
		notKept  []string
		stackLvl slog.Level
	}{
		{"odd", []any{"a", 1, "dangling"}, map[string]any{"msg": odd, "ignored key": "dangling"}, map[string]any{"a": 1.0}, []string{"dangling"}, 100},
		{"odd alone", []any{"dangling"}, map[string]any{"msg": odd, "ignored key": "dangling"}, nil, []string{"dangling"}, 100},
		{"non-string key", []any{"a", 1, 42, "v", "b", 2}, map[string]any{"msg": nonString, "invalid key": 42.0}, map[string]any{"a": 1.0}, []string{"b", "42"}, 100},
		{"nil key", []any{nil, "v"}, map[string]any{"msg": nonString, "invalid key": nil}, nil, []string{"<nil>"}, 100},
		{"key rendered as a value", []any{stringerOnly{"k"}, 1}, map[string]any{"msg": nonString, "invalid key": "S:k"}, nil, nil, 100},
		{"stack trace at the DPanic level", []any{"dangling"}, map[string]any{"msg": odd, "ignored key": "dangling"}, nil, nil, zapDPanicLevel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "Error", "WithValues"} {
				h, buf := jsonHandler(slog.LevelInfo)
				l := NewLogger(h, Zapr(true), StackTraces(tc.stackLvl)).WithName("n")
				file, line := here()
				switch via {
				case "Info":
					l.Info("m", tc.kv...)
				case "Error":
					l.Error(errors.New("e"), "m", tc.kv...)
				default:
					l.WithValues(tc.kv...).Info("m")
				}
				ls := lines(t, buf.String())
				require.Len(t, ls, 2, "%s: the DPanic line, then the record: %s", via, buf.String())
				dp, rec := ls[0], ls[1]
				assert.Equal(t, "ERROR+1", dp["level"], via)
				assert.Equal(t, "n", dp["logger"], via)
				for k, v := range tc.misuse {
					assert.Equal(t, v, dp[k], "%s: %s", via, k)
				}
				f, n := sourceOf(t, dp)
				assert.Equal(t, file, f, via)
				assert.Equal(t, line+2+map[string]int{"Info": 1, "Error": 3, "WithValues": 5}[via], n, via)
				if tc.stackLvl == zapDPanicLevel {
					assert.Contains(t, dp["stacktrace"], "TestZaprMisuseWritesDPanicLine", via)
					assert.NotContains(t, dp["stacktrace"], "logrbridge.(*sink)", via)
				} else {
					assert.NotContains(t, dp, "stacktrace", via)
				}
				assert.Equal(t, "m", rec["msg"], via)
				for k, v := range tc.kept {
					assert.Equal(t, v, rec[k], "%s: %s", via, k)
				}
				for _, k := range tc.notKept {
					assert.NotContains(t, rec, k, via)
				}
				if via == "Error" {
					assert.Equal(t, "e", rec["error"], "the error is kept")
				}
			}
		})
	}
}

func TestZaprMisuseRespectsLevels(t *testing.T) {
	h, buf := jsonHandler(slog.LevelError + 2)
	NewLogger(h, Zapr(true)).Error(nil, "m", "dangling")
	assert.Empty(t, buf.String(), "neither line enabled")

	h, buf = jsonHandler(slog.LevelError)
	NewLogger(h, Zapr(true)).V(1).Info("m", "dangling")
	assert.Empty(t, buf.String(), "no DPanic line for a disabled record, as zapr checks first")

	h, buf = jsonHandler(slog.LevelInfo)
	NewLogger(h).Info("m", 42, "x", "dangling")
	m := one(t, buf.String())
	assert.Equal(t, "x", m["42"], "without Zapr the pairs are kept")
	assert.Equal(t, MissingValue, m["dangling"])
}

func TestZaprMapsSlogLevelsAsZapr(t *testing.T) {
	for _, tc := range []struct {
		in, want slog.Level
	}{
		{slog.LevelWarn + 1, slog.LevelWarn + 1},
		{slog.LevelError, slog.LevelError},
		{slog.LevelError + 1, slog.LevelError},
		{slog.LevelError + 3, slog.LevelError},
		{slog.LevelError + 4, slog.LevelError + 4},
	} {
		h, buf := jsonHandler(slog.LevelInfo)
		slog.New(logr.ToSlogHandler(NewLogger(h, Zapr(true)))).Log(t.Context(), tc.in, "m")
		assert.Equal(t, tc.want.String(), one(t, buf.String())["level"], tc.in.String())
	}
}

func TestZaprValueKinds(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	l := NewLogger(h, Zapr(true))
	l.WithName("").WithName("a").WithName("").Info("m", "f32", float32(0.1), "", nil)
	out := buf.String()
	assert.Contains(t, out, `"logger":"a",`, "an empty name changes nothing")
	assert.Contains(t, out, `"f32":0.1,`, "float32 digits")
	assert.Contains(t, out, `"":null}`, `("", nil) is written`)

	// A text handler shows whether the MarshalLog result became a group.
	for _, tc := range []struct {
		zapr bool
		want string
	}{
		{false, "ref.name=n ref.namespace=ns"},
		{true, `ref="{Name:n Namespace:ns}"`},
	} {
		var b strings.Builder
		NewLogger(slog.NewTextHandler(&b, nil), Zapr(tc.zapr)).Info("m", "ref", namespacedName{Name: "n", Namespace: "ns"})
		assert.Contains(t, b.String(), tc.want, "zapr=%v: a MarshalLog result is the value zap.Any gets", tc.zapr)
	}
}
