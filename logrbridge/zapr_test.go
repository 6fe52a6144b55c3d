package logrbridge

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

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
