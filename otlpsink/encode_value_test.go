package otlpsink

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/asyncbus/asyncbus"
)

// encodeAttrs encodes a record with attrs through enc and returns its
// decoded LogRecord attributes.
func encodeAttrs(t *testing.T, enc asyncbus.Encoder, attrs ...slog.Attr) []pbKV {
	t.Helper()
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
	r.AddAttrs(attrs...)
	b := enc.AppendRecord(nil, context.Background(), r, "", nil)
	require.True(t, isFramed(b))
	_, n := consumeLen(b[1:])
	return decodeRecord(t, b[1+n:]).Attrs
}

// sortedKV orders a kvlist by key, at every level: a Go map's order is
// random, and OTLP's kvlists are unordered.
func sortedKV(v pbValue) pbValue {
	for i := range v.KV {
		v.KV[i].Value = sortedKV(v.KV[i].Value)
	}
	for i := range v.Arr {
		v.Arr[i] = sortedKV(v.Arr[i])
	}
	slices.SortFunc(v.KV, func(a, b pbKV) int { return strings.Compare(a.Key, b.Key) })
	return v
}

func arr(vs ...pbValue) pbValue { return pbValue{Kind: "array", Arr: vs} }
func dbl(f float64) pbValue     { return pbValue{Kind: "double", Dbl: f} }

type point struct{ X, Y int }

type myInt int

type node struct {
	Next *node
	V    int
}

// TestValuesAsOtelslogConvertsThem: each slog.KindAny shape gets the
// AnyValue otelslog's convertValue gives it (then written by the SDK's
// exporter), one case per rule of convert.go.
func TestValuesAsOtelslogConvertsThem(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	var nilPoint *point
	deep := any(1)
	for range maxValueDepth + 1 {
		deep = []any{deep}
	}
	cut := pbValue{Kind: "empty"} // the 65th nested array, cut as the SDK cuts it
	for range maxValueDepth {
		cut = arr(cut)
	}
	for name, tc := range map[string]struct {
		v    any
		want pbValue
	}{
		"map as kvlist":              {map[string]int{"a": 1, "b": 2}, kvl(pbKV{"a", i64(1)}, pbKV{"b", i64(2)})},
		"map with non-string keys":   {map[int]bool{1: true}, kvl(pbKV{"1", pbValue{Kind: "bool", Bool: true}})},
		"empty map":                  {map[string]int{}, pbValue{Kind: "kvlist", KV: []pbKV{}}},
		"map of any":                 {map[string]any{"p": point{1, 2}, "n": nil}, kvl(pbKV{"n", pbValue{Kind: "empty"}}, pbKV{"p", str("{X:1 Y:2}")})},
		"pointer to struct followed": {&point{1, 2}, str("{X:1 Y:2}")},
		"nil pointer is empty":       {nilPoint, pbValue{Kind: "empty"}},
		"slice of structs":           {[]point{{1, 2}}, arr(str("{X:1 Y:2}"))},
		"slice of uint64":            {[]uint64{1, math.MaxUint64}, arr(i64(1), str("18446744073709551615"))},
		"array":                      {[2]int8{-1, 2}, arr(i64(-1), i64(2))},
		"slice of pointers":          {[]*point{{3, 4}, nil}, arr(str("{X:3 Y:4}"), pbValue{Kind: "empty"})},
		"nested slices":              {[][]string{{"a"}, {}}, arr(arr(str("a")), pbValue{Kind: "array", Arr: []pbValue{}})},
		"times and durations inside": {[]any{time.Second, time.Unix(0, 5)}, arr(i64(int64(time.Second)), i64(5))},
		"error inside a slice":       {[]error{fmt.Errorf("e")}, arr(str("e"))},
		"complex":                    {complex(1, -2), kvl(pbKV{"i", dbl(-2)}, pbKV{"r", dbl(1)})},
		"float32 inside":             {[]float32{0.5}, arr(dbl(0.5))},
		"named int type":             {myInt(5), str("unhandled: (otlpsink.myInt) 5")},
		"struct":                     {point{1, 2}, str("{X:1 Y:2}")},
		"attribute.Value":            {attribute.MapValue(attribute.Int("a", 1), attribute.Int("a", 2), attribute.StringSlice("s", []string{"x"})), kvl(pbKV{"a", i64(2)}, pbKV{"s", arr(str("x"))})},
		"cycle":                      {cyclic, str(maxDepthExceeded)},
		"deeper than the SDK keeps":  {deep, cut},
	} {
		t.Run(name, func(t *testing.T) {
			got := encodeAttrs(t, newEncoder(false, ""), slog.Any("v", tc.v))
			require.Len(t, got, 1)
			require.Equal(t, "v", got[0].Key)
			assert.Equal(t, sortedKV(tc.want), sortedKV(got[0].Value))
		})
	}
}

// TestValuesPrintedWithAnAddress: a func and a struct holding a pointer
// (here a cycle) are fmt's text, which holds an address.
func TestValuesPrintedWithAnAddress(t *testing.T) {
	n := &node{V: 1}
	n.Next = n
	got := encodeAttrs(t, newEncoder(false, ""), slog.Any("f", []any{func() {}}), slog.Any("n", n))
	require.Len(t, got, 2)
	require.Len(t, got[0].Value.Arr, 1)
	assert.True(t, strings.HasPrefix(got[0].Value.Arr[0].Str, "unhandled: (func()) 0x"), got[0].Value.Arr[0].Str)
	assert.True(t, strings.HasPrefix(got[1].Value.Str, "{Next:0x"), got[1].Value.Str)
}

// TestErrorsAreTheRecordsException: an error at a handler level (the top,
// a WithGroup level, WithAttrs) is the record's exception.message and
// exception.type, the last one winning; inside a group value it is a
// string under its key.
func TestErrorsAreTheRecordsException(t *testing.T) {
	errA, errB := fmt.Errorf("a"), fmt.Errorf("b: %w", fmt.Errorf("inner"))
	exc := func(msg, typ string) []pbKV {
		return []pbKV{{"exception.message", str(msg)}, {"exception.type", str(typ)}}
	}
	top := newEncoder(false, "")
	for _, tc := range []struct {
		name  string
		enc   asyncbus.Encoder
		attrs []slog.Attr
		want  []pbKV
	}{
		{"top level", top, []slog.Attr{slog.Any("err", errA), slog.Int("k", 1)}, append([]pbKV{{"k", i64(1)}}, exc("a", "*errors.errorString")...)},
		{"fmt %w wrapper unwrapped for the type", top, []slog.Attr{slog.Any("err", errB)}, exc("b: inner", "*errors.errorString")},
		{"last one wins", top.WithAttrs([]slog.Attr{slog.Any("e1", errB)}), []slog.Attr{slog.Any("e2", errA)}, exc("a", "*errors.errorString")},
		{"WithAttrs error kept", top.WithAttrs([]slog.Attr{slog.Any("e1", errA)}).WithGroup("g"), []slog.Attr{slog.Int("k", 1)},
			append([]pbKV{{"g", kvl(pbKV{"k", i64(1)})}}, exc("a", "*errors.errorString")...)},
		{"under WithGroup: at the top", top.WithGroup("g"), []slog.Attr{slog.Any("err", errA)}, exc("a", "*errors.errorString")},
		{"inside a group value: a string", top, []slog.Attr{slog.Group("g", slog.Any("err", errA))}, []pbKV{{"g", kvl(pbKV{"err", str("a")})}}},
		{"empty key still an error", top, []slog.Attr{slog.Any("", errA)}, exc("a", "*errors.errorString")},
		{"logged exception.message wins", top, []slog.Attr{slog.String("exception.message", "mine"), slog.Any("err", errA)},
			[]pbKV{{"exception.message", str("mine")}, {"exception.type", str("*errors.errorString")}}},
		{"exception.type from WithAttrs wins", top.WithAttrs([]slog.Attr{slog.String("exception.type", "mine")}), []slog.Attr{slog.Any("err", errA)},
			[]pbKV{{"exception.type", str("mine")}, {"exception.message", str("a")}}},
		{"ErrorType method", top, []slog.Attr{slog.Any("err", typedErr{})}, exc("typed", "custom.Type")},
		{"named type", top, []slog.Attr{slog.Any("err", namedErr{})}, exc("named", "github.com/asyncbus/asyncbus/otlpsink.namedErr")},
		{"empty message: type only", top, []slog.Attr{slog.Any("err", namedErr{empty: true})}, []pbKV{{"exception.type", str("github.com/asyncbus/asyncbus/otlpsink.namedErr")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, encodeAttrs(t, tc.enc, tc.attrs...))
		})
	}
}

type typedErr struct{}

func (typedErr) Error() string     { return "typed" }
func (typedErr) ErrorType() string { return "custom.Type" }

type namedErr struct{ empty bool }

func (e namedErr) Error() string {
	if e.empty {
		return ""
	}
	return "named"
}
