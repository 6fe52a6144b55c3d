package encode

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Test types exercising every way a value can reach an encoder.

type textM struct{ s string }

func (t textM) MarshalText() ([]byte, error) { return []byte("T<" + t.s + ">"), nil }

// textA has both text methods, which disagree: slog's TextHandler uses
// AppendText from Go 1.27, MarshalText before.
type textA struct{ s string }

func (t textA) MarshalText() ([]byte, error) { return []byte("M<" + t.s + ">"), nil }

func (t textA) AppendText(b []byte) ([]byte, error) {
	if t.s == "" {
		return nil, errors.New("append failed")
	}
	return append(b, "A<"+t.s+">"...), nil
}

type textErrM struct{}

func (textErrM) MarshalText() ([]byte, error) { return nil, errors.New("text failed") }

type jsonM struct{ N int }

func (j jsonM) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`{"n":%d}`, j.N)), nil }

type jsonErrM struct{}

func (jsonErrM) MarshalJSON() ([]byte, error) { return nil, errors.New("json failed") }

type jsonBadM struct{}

func (jsonBadM) MarshalJSON() ([]byte, error) { return []byte(`{bad`), nil }

type jsonPanicM struct{}

func (jsonPanicM) MarshalJSON() ([]byte, error) { panic("marshal boom") }

type textPanicM struct{}

func (textPanicM) MarshalText() ([]byte, error) { panic("text boom") }

type stringerPanic struct{}

func (stringerPanic) String() string { panic("string boom") }

type errPanic struct{}

func (errPanic) Error() string { panic("error boom") }

type myErr struct{ msg string }

func (e *myErr) Error() string { return e.msg } // panics on a nil receiver

type jsonErr struct{}

func (jsonErr) Error() string                { return "jsonErr as error" }
func (jsonErr) MarshalJSON() ([]byte, error) { return []byte(`"jsonErr as json"`), nil }

type stringer struct{}

func (stringer) String() string { return "i am <stringer>" }

type valuer struct{ v slog.Value }

func (l valuer) LogValue() slog.Value { return l.v }

type chainValuer int

func (c chainValuer) LogValue() slog.Value {
	if c == 0 {
		return slog.StringValue("bottom")
	}
	return slog.AnyValue(c - 1)
}

type selfValuer struct{}

func (s selfValuer) LogValue() slog.Value { return slog.AnyValue(s) }

type panicValuer struct{}

func (panicValuer) LogValue() slog.Value { panic("logvalue boom") }

type namedBytes []byte

type point struct {
	X, Y int
	Name string
}

var (
	fixedTime = time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC)
	tzA       = time.FixedZone("A", 5*3600+30*60)
	tzB       = time.FixedZone("B", -(7*3600 + 15*60 + 30))
	tzC       = time.FixedZone("C", -30)
)

func callerPC() uintptr {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	return pcs[0]
}

// valueAttrs lists one attribute per interesting value.
func valueAttrs() []slog.Attr {
	var nilErr error
	var typedNil *myErr
	var typedNilStringer *strings.Builder
	big := strings.Repeat("abc\"é\x00\n<>&\u2028\xff ", 1<<18) // ~3.6 MB
	return []slog.Attr{
		slog.String("s", "plain"),
		slog.String("empty", ""),
		slog.String("space", "a b"),
		slog.String("eq", "a=b"),
		slog.String("quote", `say "hi"`),
		slog.String("backslash", `C:\path\x`),
		slog.String("html", "<a href='x'>&amp;</a>"),
		slog.String("ctrl", "a\x00b\x01c\x1fd\te\nf\rg\x7fh"),
		slog.String("bad-utf8", "a\xffb\xc0\xafc\xe2\x82"),
		slog.String("seps", "x\u2028y\u2029z"),
		slog.String("unicode", "héllo wörld 日本 🎉"),
		slog.String("nbsp", "a\u00a0b"),
		slog.String("nonprint", "a\u200bb\ufeffc"),
		slog.String("replchar", "a\ufffdb"),
		slog.String("", "empty key"),
		slog.String("key with space", "v"),
		slog.String("k=ey", "v"),
		slog.String(`k"ey`, "v"),
		slog.String("k\x01ey\xff", "v"),
		slog.String("null", "null"),
		slog.String("big", big),
		slog.Int("int", -42),
		slog.Int64("i64max", math.MaxInt64),
		slog.Int64("i64min", math.MinInt64),
		slog.Uint64("u64max", math.MaxUint64),
		slog.Float64("f0", 0),
		slog.Float64("fneg0", math.Copysign(0, -1)),
		slog.Float64("f1", 1.5),
		slog.Float64("fbig", 1e21),
		slog.Float64("fbig2", 1e20),
		slog.Float64("fsmall", 1e-7),
		slog.Float64("fsmall2", 1e-6),
		slog.Float64("fpi", math.Pi),
		slog.Float64("fmax", math.MaxFloat64),
		slog.Float64("fsub", 5e-324),
		slog.Float64("fint", 123456789),
		slog.Float64("nan", math.NaN()),
		slog.Float64("inf", math.Inf(1)),
		slog.Float64("ninf", math.Inf(-1)),
		slog.Bool("t", true),
		slog.Bool("f", false),
		slog.Duration("d0", 0),
		slog.Duration("d1", 1500*time.Microsecond),
		slog.Duration("d2", time.Hour+2*time.Minute+3*time.Second+4),
		slog.Duration("dneg", -5),
		slog.Duration("dmin", math.MinInt64),
		slog.Duration("dus", 1500),
		slog.Time("tm", fixedTime),
		slog.Time("tm0ns", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)),
		slog.Time("tmms", time.Date(2024, 1, 2, 3, 4, 5, 100000000, time.UTC)),
		slog.Time("tmA", fixedTime.In(tzA)),
		slog.Time("tmB", fixedTime.In(tzB)),
		slog.Time("tmC", fixedTime.In(tzC)),
		slog.Time("tmLocal", fixedTime.Local()),
		slog.Time("tmMono", time.Now()),
		slog.Time("tmZero", time.Time{}),
		slog.Time("tm10000", time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC)),
		slog.Time("tmNeg", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)),
		slog.Time("tm1900", time.Date(1900, 12, 31, 23, 59, 59, 999999999, time.UTC)),
		slog.Any("anynil", nil),
		slog.Any("struct", point{1, 2, "p<>"}),
		slog.Any("ptr", &point{3, 4, "q"}),
		slog.Any("map", map[string]int{"b": 2, "a": 1}),
		slog.Any("slice", []int{1, 2, 3}),
		slog.Any("bytes", []byte("hi\x00there \xff")),
		slog.Any("nilbytes", []byte(nil)),
		slog.Any("namedbytes", namedBytes("named")),
		slog.Any("textm", textM{"x y"}),
		slog.Any("texterr", textErrM{}),
		slog.Any("textboth", textA{"x y"}),
		slog.Any("textbotherr", textA{}),
		slog.Any("timeptr10000", new(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))),
		slog.Any("jsonm", jsonM{7}),
		slog.Any("jsonerr", jsonErrM{}),
		slog.Any("jsonbad", jsonBadM{}),
		slog.Any("jsonpanic", jsonPanicM{}),
		slog.Any("textpanic", textPanicM{}),
		slog.Any("stringerpanic", stringerPanic{}),
		slog.Any("errpanic", errPanic{}),
		slog.Any("err", errors.New("boom \"quoted\"")),
		slog.Any("wrapped", fmt.Errorf("ctx: %w", errors.New("inner"))),
		slog.Any("nilerr", nilErr),
		slog.Any("typednilerr", typedNil),
		slog.Any("typednilstringer", typedNilStringer),
		slog.Any("jsonerrboth", jsonErr{}),
		slog.Any("stringer", stringer{}),
		slog.Any("level", slog.LevelWarn),
		slog.Any("lvltrace", LevelTrace),
		slog.Any("addr", netip.MustParseAddr("192.168.0.1")),
		slog.Any("fnum", float32(1.25)),
		slog.Any("uint8", uint8(200)),
		slog.Any("complex", complex(1, 2)),
		slog.Any("chan", (chan int)(nil)),
		slog.Any("valuer", valuer{slog.IntValue(5)}),
		slog.Any("valuergroup", valuer{slog.GroupValue(slog.Int("a", 1), slog.Any("inner", valuer{slog.StringValue("deep")}))}),
		slog.Any("valueremptygroup", valuer{slog.GroupValue()}),
		slog.Any("chain", chainValuer(50)),
		slog.Any("cycle", selfValuer{}),
		slog.Any("panicvaluer", panicValuer{}),
		slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "x y"))),
		slog.Group("emptyg"),
		slog.Group("", slog.Int("inl1", 1), slog.Int("inl2", 2)),
		slog.Group("allempty", slog.Attr{}, slog.Attr{}),
		slog.Group("g sp", slog.Int("k=1", 1)),
		{},
	}
}

// kindCases builds groups of attrs for the identity corpus.
func kindCases() map[string][]slog.Attr {
	cases := map[string][]slog.Attr{}
	all := valueAttrs()
	for _, a := range all {
		cases["attr/"+a.Key] = []slog.Attr{a}
	}
	cases["all"] = all
	cases["none"] = nil
	cases["onlyempty"] = []slog.Attr{{}, {}}
	cases["onlyemptygroup"] = []slog.Attr{slog.Group("e")}
	deep := slog.Int("leaf", 1)
	for i := 0; i < 200; i++ {
		deep = slog.Group(fmt.Sprintf("d%d", i), deep)
	}
	cases["deep"] = []slog.Attr{deep, slog.Int("after", 2)}
	return cases
}

// bytesErr is a named byte slice that is also an error: slog writes its
// bytes in Text (byteSlice comes before fmt) and its Error() in JSON.
type bytesErr []byte

func (b bytesErr) Error() string { return "bytesErr.Error" }

// TestBytesErrorFollowsSlogOrder: a bytesErr is written as slog writes it,
// its bytes in Text and the key=value formats, its Error() in JSON.
func TestBytesErrorFollowsSlogOrder(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("b", bytesErr("raw bytes")), slog.Group("g", slog.Any("b", bytesErr("x")))})
	for _, f := range []Format{JSON, Text} {
		for _, rep := range []string{"nil", "identity"} {
			want := reference(t, f, false, replacers[rep], chains["g-attrs"], r)
			require.Equal(t, want, ours(f, false, replacers[rep], chains["g-attrs"], r, true), "format %d rep %s", f, rep)
		}
	}
	require.Contains(t, ours(Text, false, nil, nil, r, true), `b="raw bytes"`)
	require.Contains(t, ours(JSON, false, nil, nil, r, true), `"b":"bytesErr.Error"`)
	require.Contains(t, ours(Logfmt, false, nil, nil, r, true), `b="raw bytes"`)
	require.Contains(t, ours(Console, false, nil, nil, r, true), `b="raw bytes"`)
}
