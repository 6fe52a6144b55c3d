package encode

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

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
