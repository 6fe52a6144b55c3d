package encode

import (
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type panicStringer struct{ p *int }

func (s panicStringer) String() string { return fmt.Sprint(*s.p) } // panics on a nil p

type valueStringer struct{ n int }

func (s valueStringer) String() string { return fmt.Sprintf("vs<%d> x=y", s.n) }

// textAnyValues returns random values of the kinds appendFmtText writes,
// and some it leaves to fmt.
func textAnyValues(g *typeGen) []any {
	strs := make([]string, g.n(4))
	for i := range strs {
		strs[i] = g.str()
	}
	ints := []int{0, -1, math.MaxInt, math.MinInt, int(g.int64())}
	floats := []float64{g.float(false), g.float(false), math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e21, 1e20, 1e-5, 123456789}
	f32 := []float32{float32(g.float(true)), 0.1, float32(math.Inf(-1)), 3.4e38}
	t := g.time()
	u, _ := url.Parse("https://example.com/a b?q=" + g.str())
	var nilStringer *valueStringer
	return []any{
		strs, []string(nil), []string{}, []string{""}, []string{"a b", "c=d", `"q"`},
		ints, []int64{int64(ints[4]), -5}, []int32{math.MinInt32, 7}, []uint{0, math.MaxUint},
		[]uint64{math.MaxUint64}, []uint32{1, 2}, floats, f32, []bool{true, false}, []bool(nil),
		&t, time.March, time.Duration(g.int64()) * time.Nanosecond, valueStringer{n: g.n(100)},
		nilStringer, panicStringer{}, u, big.NewInt(g.int64()), // *big.Int is a fmt.Formatter: fmt
		[]time.Duration{time.Second}, [2]int{1, 2}, // methods on the elements, an array: fmt
	}
}

// TestTextAnyMatchesSlog compares the values appendFmtText writes in Text
// lines with slog's TextHandler, and in Logfmt and Console with the same
// text through fmt, as a string attribute.
func TestTextAnyMatchesSlog(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	for i := range 300 {
		g := newTypeGen(seed + uint64(i))
		for _, a := range textAnyValues(g) {
			r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Any("v", a)})
			requireSame(t, slogOutput(t, Text, false, nil, nil, r), ours(Text, false, nil, nil, r, true),
				fmt.Sprintf("Text of %T %#v (seed %d)", a, a, seed+uint64(i)))
			if _, ok, _ := marshalText(a); ok {
				continue // written from its text method, before fmt's turn
			}
			viaFmt := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.String("v", fmtText(a))})
			for _, f := range []Format{Logfmt, Console} {
				require.Equal(t, ours(f, false, nil, nil, viaFmt, true), ours(f, false, nil, nil, r, true), "format %d, %T", f, a)
			}
		}
	}
}

// fmtText is fmt's %+v of a, or the panic text fmt writes.
func fmtText(a any) string { return fmt.Sprintf("%+v", a) }

// TestFmtTextCoverage pins which values appendFmtText writes itself.
func TestFmtTextCoverage(t *testing.T) {
	native := []any{[]string{"a"}, []int{1}, []float64{1.5}, []bool{true}, time.March, &fixedTime, valueStringer{}}
	for _, a := range native {
		got, ok := appendFmtText(nil, a)
		require.True(t, ok, "%T", a)
		require.Equal(t, fmtText(a), string(got), "%T", a)
	}
	var nilStringer *valueStringer
	left := []any{big.NewInt(1), []time.Duration{1}, [1]int{1}, nilStringer, panicStringer{}, fmt.Errorf("e"), struct{}{}}
	for _, a := range left {
		_, ok := appendFmtText(nil, a)
		require.False(t, ok, "%T", a)
	}
}

// TestFmtTextDoesNotAllocate: a slice of scalars is written in Text with
// no allocation.
func TestFmtTextDoesNotAllocate(t *testing.T) {
	e := New(Options{Format: Text})
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{
		slog.Any("s", []string{"a", "b"}), slog.Any("i", []int{1, 2}), slog.Any("f", []float64{0.5}),
	})
	buf := e.Append(nil, r, nil)
	require.Zero(t, testing.AllocsPerRun(100, func() { buf = e.Append(buf[:0], r, nil) }))
}
