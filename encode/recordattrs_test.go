package encode

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// attrsByIteration returns r's attributes as Record.Attrs visits them.
func attrsByIteration(r slog.Record) []slog.Attr {
	var as []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		as = append(as, a)
		return true
	})
	return as
}

// TestRecordAttrs checks the direct read of a Record's attributes against
// Record.Attrs on this Go release (recordAttrsOK must hold: if slog's layout
// changes this fails, as a reminder that the fast path is off), for records
// built every way a caller builds them.
func TestRecordAttrs(t *testing.T) {
	require.True(t, recordAttrsOK, "slog.Record's layout changed: the encoders fall back to Record.Attrs")
	build := map[string]func(n int) slog.Record{
		"AddAttrs": func(n int) slog.Record {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
			for i := range n {
				r.AddAttrs(slog.String("k"+strconv.Itoa(i), "v"))
			}
			return r
		},
		"Add args": func(n int) slog.Record {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
			for i := range n {
				r.Add("k"+strconv.Itoa(i), i)
			}
			return r
		},
		"AddAttrs at once, empty groups omitted": func(n int) slog.Record {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
			var as []slog.Attr
			for i := range n {
				as = append(as, slog.Group("empty"), slog.Int("k"+strconv.Itoa(i), i))
			}
			r.AddAttrs(as...)
			return r
		},
		"Clone then AddAttrs": func(n int) slog.Record {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
			for i := range n / 2 {
				r.AddAttrs(slog.Int("a"+strconv.Itoa(i), i))
			}
			c := r.Clone()
			for i := range n - n/2 {
				c.AddAttrs(slog.Bool("b"+strconv.Itoa(i), true))
			}
			r.AddAttrs(slog.String("not in the clone", "x"))
			return c
		},
	}
	for name, mk := range build {
		for n := range 14 {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				r := mk(n)
				front, back, ok := recordAttrs(&r)
				require.True(t, ok)
				got := append(append([]slog.Attr{}, front...), back...)
				want := attrsByIteration(r)
				require.Len(t, got, len(want))
				for i := range want {
					require.True(t, want[i].Equal(got[i]), "attr %d: want %v, got %v", i, want[i], got[i])
				}
			})
		}
	}
}

// TestRecordAttrsFallback runs randomized differential cases (see
// TestDifferential) with the direct read turned off, as on a Go release
// whose Record layout fails the check: output must still match slog's.
func TestRecordAttrsFallback(t *testing.T) {
	saved := recordAttrsOK
	recordAttrsOK = false
	defer func() { recordAttrsOK = saved }()
	seed := rand.Uint64()
	pc := callerPC()
	for i := range 300 {
		g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		c := g.testCase(pc)
		if !t.Run(fmt.Sprint(i), func(t *testing.T) { c.check(t) }) {
			t.Fatalf("case %d failed, seed %d\n%s", i, seed, c)
		}
	}
}

// TestZapAttrsFallback: the zap encodings write the same with the direct
// read and with Record.Attrs, including the trailing stack trace attribute
// (written as the entry's stack, not as a field) with 0 to 8 other
// attributes, i.e. in the inline part and in the heap part.
func TestZapAttrsFallback(t *testing.T) {
	saved := recordAttrsOK
	defer func() { recordAttrsOK = saved }()
	for _, f := range []Format{ZapJSON, ZapConsole} {
		for n := range 9 {
			for _, withStack := range []bool{false, true} {
				r := slog.NewRecord(time.Date(2024, 5, 17, 10, 30, 45, 0, time.UTC), slog.LevelError, "m", 0)
				for i := range n {
					r.AddAttrs(slog.Int("k"+strconv.Itoa(i), i))
				}
				if withStack {
					r.AddAttrs(slog.String(zapStackKey, "goroutine 1 [running]:\nmain.main()"))
				}
				e := New(Options{Format: f})
				var out [2]string
				for i, ok := range []bool{true, false} {
					recordAttrsOK = ok
					out[i] = string(e.Append(nil, r, nil))
				}
				require.Equal(t, out[0], out[1], "format %v, %d attrs, stack %v", f, n, withStack)
				if withStack {
					require.Contains(t, out[0], "main.main()")
				}
			}
		}
	}
}

// TestAttrsLayoutOf: the layout lookup accepts slog.Record's fields only
// with the names and types the direct read assumes; anything else gives
// the zero layout, with which recordAttrsOK is false.
func TestAttrsLayoutOf(t *testing.T) {
	//lint:ignore U1000 the fields are only looked up through reflect
	type same struct {
		x      int
		front  [5]slog.Attr
		nFront int
		back   []slog.Attr
	}
	//lint:ignore U1000 the fields are only looked up through reflect
	type renamed struct {
		front [5]slog.Attr
		n     int
		back  []slog.Attr
	}
	//lint:ignore U1000 the fields are only looked up through reflect
	type retypedCount struct {
		front  [5]slog.Attr
		nFront int32
		back   []slog.Attr
	}
	//lint:ignore U1000 the fields are only looked up through reflect
	type retypedFront struct {
		front  [5]slog.Value
		nFront int
		back   []slog.Attr
	}
	//lint:ignore U1000 the fields are only looked up through reflect
	type frontSlice struct {
		front  []slog.Attr
		nFront int
		back   []slog.Attr
	}
	//lint:ignore U1000 the fields are only looked up through reflect
	type retypedBack struct {
		front  [5]slog.Attr
		nFront int
		back   []*slog.Attr
	}
	l := attrsLayoutOf(reflect.TypeFor[same]())
	require.Equal(t, 5, l.frontLen)
	require.Equal(t, unsafe.Offsetof(same{}.front), l.front)
	require.Equal(t, unsafe.Offsetof(same{}.nFront), l.nFront)
	require.Equal(t, unsafe.Offsetof(same{}.back), l.back)
	for _, typ := range []reflect.Type{
		reflect.TypeFor[renamed](), reflect.TypeFor[retypedCount](), reflect.TypeFor[retypedFront](),
		reflect.TypeFor[frontSlice](), reflect.TypeFor[retypedBack](), reflect.TypeFor[int](),
	} {
		require.Zero(t, attrsLayoutOf(typ), typ.String())
	}
	require.NotZero(t, recordLayout.frontLen, "this Go's slog.Record has the assumed fields")
}

// TestRecordAttrsBoundsCheck: an nFront outside [0, len(front)] (which
// slog never stores) makes the direct read report !ok instead of reading
// past the array.
func TestRecordAttrsBoundsCheck(t *testing.T) {
	for _, n := range []int{-1, recordLayout.frontLen + 1, math.MaxInt} {
		r := slog.NewRecord(time.Time{}, slog.LevelInfo, "m", 0)
		r.AddAttrs(slog.Int("a", 1))
		*(*int)(unsafe.Add(unsafe.Pointer(&r), recordLayout.nFront)) = n
		_, _, ok := recordAttrsUnchecked(&r)
		require.False(t, ok, "nFront %d", n)
	}
}
