package encode

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	anyTypes  = flag.Int("any.types", 0, "number of random types of TestAnyMatchesSlog (0: 5000, or 1000 with -short or -race)")
	anySeed   = flag.Uint64("any.seed", 0, "seed of TestAnyMatchesSlog's first type (0: a new one per run)")
	anyValues = flag.Int("any.values", 50, "number of random values of each type in TestAnyMatchesSlog")
)

// encodingJSON is what slog's JSONHandler writes for a through
// encoding/json: its output, or its error as slog formats it.
func encodingJSON(a any) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = fmt.Sprintf("!PANIC: %v (%T)", r, a)
		}
	}()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		return "!ERROR:" + err.Error()
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// slogAnyLine is slog.JSONHandler's line for a record holding a under "v".
func slogAnyLine(t testing.TB, a any) string {
	var buf bytes.Buffer
	r := slog.NewRecord(fixedTime, slog.LevelInfo, "m", 0)
	r.AddAttrs(slog.Any("v", a))
	require.NoError(t, slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r))
	return buf.String()
}

func oursAnyLine(a any) string {
	r := slog.NewRecord(fixedTime, slog.LevelInfo, "m", 0)
	r.AddAttrs(slog.Any("v", a))
	return string(New(Options{Format: JSON}).Append(nil, r, nil))
}

// fallsBack reports whether t's plan, or that of a type t holds (but
// not through interfaces), writes with encoding/json.
func fallsBack(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return fallsBack(t.Elem(), seen)
	case reflect.Map:
		return fallsBack(t.Key(), seen) || fallsBack(t.Elem(), seen)
	case reflect.Struct:
		if !plainJSONTags(t) {
			return true
		}
		for i := range t.NumField() {
			if fallsBack(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// checkAnyValue compares the native plan's output for a with
// encoding/json's, where the plan writes it, and our whole line with
// slog's; it reports whether the plan wrote it natively.
func checkAnyValue(t testing.TB, a any) (native bool) {
	t.Helper()
	got, ok := appendJSONNative(nil, a)
	if ok {
		require.Equal(t, encodingJSON(a), string(got), "native plan of %T", a)
	}
	// slogTimeFixed: a time.Time is slog's KindTime, see TestIdentityKinds.
	requireSame(t, slogTimeFixed(slogAnyLine(t, a)), oursAnyLine(a), "line")
	return ok
}

// anySeedCheck checks n random values of one random type made from seed.
func anySeedCheck(t testing.TB, seed uint64, n int) (native, total int) {
	g := newTypeGen(seed)
	typ := g.typ(3)
	for range n {
		v := g.value(typ, 4)
		var a any
		if v.CanInterface() {
			a = v.Interface()
		}
		if checkAnyValue(t, a) {
			native++
		}
		total++
	}
	return native, total
}

// TestAnyMatchesSlog compares random values of random types (structs
// made with reflect.StructOf, nested, tagged and embedding declared
// structs; pointers, slices, arrays, maps, interfaces; recursive and
// method-bearing declared types) written in slog.Any attributes with
// slog's JSONHandler, line by line; and the native plan's own output with
// encoding/json's wherever the plan writes the value itself.
func TestAnyMatchesSlog(t *testing.T) {
	seed := *anySeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	types := *anyTypes
	if types == 0 {
		// 5000 types of 50 values: 250,000 values, about 20 s on two
		// cores, so the three CI steps that run it (race, 386, the newest
		// Go) stay within the CI budget; the race detector makes it ten
		// times slower. A fresh seed each run widens the coverage over time.
		types = 5000
		if testing.Short() || raceEnabled {
			types = 1000
		}
	}
	native, total := 0, 0
	for i := range types {
		s := seed + uint64(i)
		n, m := anySeedCheck(t, s, *anyValues)
		if t.Failed() {
			t.Fatalf("seed %d: rerun with -run TestAnyMatchesSlog -any.types=1 -any.seed=%d", s, s)
		}
		native += n
		total += m
	}
	t.Logf("%d values, %d written natively", total, native)
	// The generator makes values encoding/json rejects only rarely: most
	// must go through the plans, or this test would prove nothing of them.
	require.Greater(t, native, total*8/10, "values written natively")
}

// FuzzAnyMatchesSlog is TestAnyMatchesSlog over the type generator's seed.
func FuzzAnyMatchesSlog(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { anySeedCheck(t, seed, 5) })
}

// TestAnyPlanStops checks the values the plans hand to encoding/json: its
// errors, where slog writes them as "!ERROR:...", and MarshalJSON results
// that need more than their whitespace removed.
func TestAnyPlanStops(t *testing.T) {
	type withChan struct{ C chan int }
	type withFunc struct{ F func() }
	cyc := &gNode{Val: 1}
	cyc.Next = cyc
	m := map[string]any{}
	m["self"] = m
	cases := map[string]any{
		"NaN":           struct{ F float64 }{F: nan()},
		"+Inf float32":  []float32{float32(inf())},
		"chan":          withChan{C: make(chan int)},
		"nil chan":      withChan{},
		"func":          withFunc{},
		"complex":       []complex128{1},
		"cycle":         cyc,
		"map cycle":     m,
		"bad number":    json.Number("01"),
		"bad raw":       json.RawMessage(`{bad`),
		"empty raw":     json.RawMessage{},
		"raw 2028":      json.RawMessage("\"\u2028\""),
		"raw invalid":   json.RawMessage("\"\xff\""),
		"year 10000":    struct{ T time.Time }{T: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"marshal error": struct{ J jsonErrM }{},
		"text error":    map[string]textErrM{"k": {}},
		"key error":     map[textErrKey]int{{}: 1},
		"keys alike":    map[alikeKey]int{{1}: 7, {2}: 7}, // one line in either order
	}
	for name, a := range cases {
		t.Run(name, func(t *testing.T) {
			_, ok := appendJSONNative(nil, a)
			require.False(t, ok, "the plan must stop")
			require.Equal(t, slogTimeFixed(slogAnyLine(t, a)), oursAnyLine(a))
		})
	}
}

// alikeKey's keys are all written "same".
type alikeKey struct{ n int }

func (alikeKey) MarshalText() ([]byte, error) { return []byte("same"), nil }

type textErrKey struct{}

func (textErrKey) MarshalText() ([]byte, error) { return nil, errTextKey }

var errTextKey = json.Unmarshal([]byte("{"), new(any))

func nan() float64 { var z float64; return z / z }
func inf() float64 { var z float64; return 1 / z }

// TestAnyNativeAddressability checks encoding/json's rule that a method on
// the pointer is used only for an addressable value: a struct in an
// interface is not, a struct behind a pointer or in a slice is, a map's
// value is not.
func TestAnyNativeAddressability(t *testing.T) {
	type holder struct{ P gMarshalP }
	cases := []any{
		holder{P: gMarshalP{A: 1}},
		&holder{P: gMarshalP{A: 2}},
		[]holder{{P: gMarshalP{A: 3}}},
		map[string]holder{"k": {P: gMarshalP{A: 4}}},
		map[string][1]gMarshalP{"k": {{A: 5}}},
		[1]gTextP{6},
		&[1]gTextP{7},
	}
	for _, a := range cases {
		native := checkAnyValue(t, a)
		require.True(t, native, "%T", a)
	}
	require.Equal(t, reflect.TypeFor[gMarshalP]().Kind(), reflect.Struct)
}
