package encode

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStampCacheConcurrent hammers the per-second stamp cache (stampLast and
// stampCache) from goroutines whose times collide on purpose: the same
// second in different zones (a stamp hit must match the location as well as
// the second), seconds moving forward and back, years outside [0,9999].
// Every formatted time must equal package time's. Run with -race.
func TestStampCacheConcurrent(t *testing.T) {
	const goroutines, perG = 8, 2000
	zones := []*time.Location{time.UTC, tzA, tzB, tzC, time.Local}
	base := time.Date(2025, 12, 31, 23, 59, 58, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range perG {
				sec := time.Duration((i*7+g)%5) * time.Second // a few seconds, revisited
				tm := base.Add(sec + time.Duration(i*g)*time.Microsecond).In(zones[(i+g)%len(zones)])
				if i%97 == 0 {
					tm = tm.AddDate(-3000*(g%2+1)*4, 0, 0) // negative years: the fallback path
				}
				want := strconv.Quote(tm.Format(time.RFC3339Nano))
				if y := tm.Year(); y < 0 || y > 9999 {
					want = `"` + errYear + `"` // the error alone: valid JSON
				}
				buf = appendJSONTime(buf[:0], tm)
				if string(buf) != want {
					errs <- fmt.Errorf("goroutine %d, %v: got %s, want %s", g, tm, buf, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestTimeWritersFullBuffer writes times into buffers with every amount of
// spare capacity, in every kind of zone, so the fixed-size stores and the
// growth path both run; only the returned bytes count.
func TestTimeWritersFullBuffer(t *testing.T) {
	for _, loc := range []*time.Location{time.UTC, tzA, tzB, tzC} {
		for _, ns := range []int{0, 5, 123456789, 100000000} {
			tm := time.Date(2024, 5, 17, 10, 30, 45, ns, loc)
			json := strconv.Quote(tm.Format(time.RFC3339Nano))
			text := tm.Format("2006-01-02T15:04:05.000Z07:00")
			for spare := 0; spare <= 40; spare++ {
				b := make([]byte, 3, 3+spare)
				copy(b, "abc")
				require.Equal(t, "abc"+json, string(appendJSONTime(b, tm)), "spare %d", spare)
				require.Equal(t, "abc"+text, string(appendRFC3339Millis(b, tm)), "spare %d", spare)
			}
		}
	}
}

func TestDecimalLen(t *testing.T) {
	for p := uint64(1); ; p *= 10 {
		for _, u := range []uint64{p - 1, p, p + 1} {
			if u > 0 {
				require.Equal(t, len(strconv.FormatUint(u, 10)), decimalLen(u), "%d", u)
				require.Equal(t, strconv.FormatUint(u, 10), string(appendUint(nil, u)), "%d", u)
			}
		}
		if p > math.MaxUint64/10 {
			break
		}
	}
	require.Equal(t, 20, decimalLen(math.MaxUint64))
}

// TestJSONKeyStringSpare writes keys and strings of every length up to 40,
// clean and needing escapes at every position, into buffers with every
// amount of spare capacity, against the general escaper.
func TestJSONKeyStringSpare(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for bad := -1; bad < n; bad++ {
			s := []byte(fmt.Sprintf("%040d", 0)[:n])
			for i := range s {
				s[i] = 'a' + byte(i%26)
			}
			if bad >= 0 {
				s[bad] = '"'
			}
			key := string(s)
			esc := string(appendEscapedJSON(nil, key))
			for spare := 0; spare <= 40; spare += 3 {
				b := make([]byte, 1, 1+spare)
				b[0] = '{'
				require.Equal(t, `{,"`+esc+`":`, string(appendJSONKey(b, key, true)), "%q spare %d", key, spare)
				require.Equal(t, `{"`+esc+`":`, string(appendJSONKey(b, key, false)), "%q spare %d", key, spare)
				require.Equal(t, `{"`+esc+`"`, string(appendJSONString(b, key)), "%q spare %d", key, spare)
			}
		}
	}
}

// TestValueNum checks the direct read of a scalar Value's number against
// slog's accessors, on this Go release (valueNumOK must hold: if slog's
// layout changes this fails, as a reminder that the fast path is off) and
// through the accessor fallback.
func TestValueNum(t *testing.T) {
	require.True(t, valueNumOK, "slog.Value's layout changed: valueNum falls back to the accessors")
	ints := []int64{0, 1, -1, 42, math.MinInt64, math.MaxInt64, 1500000}
	for _, ok := range []bool{true, false} {
		saved := valueNumOK
		valueNumOK = ok
		for _, n := range ints {
			v := slog.Int64Value(n)
			require.Equal(t, n, valueInt64(&v, slog.KindInt64))
			d := slog.DurationValue(time.Duration(n))
			require.Equal(t, n, valueInt64(&d, slog.KindDuration))
		}
		for _, b := range []bool{true, false} {
			v := slog.BoolValue(b)
			require.Equal(t, b, valueBool(&v))
		}
		valueNumOK = saved
	}
}

// TestJSONKeyCacheConcurrent has goroutines write keys whose slots collide
// (more distinct keys than slots, of every cached length, many differing
// only in their middle bytes or length) through the cache at once: every
// key must come out as its own encoding, whichever key holds its slot.
// Run with -race.
func TestJSONKeyCacheConcurrent(t *testing.T) {
	var keys []string
	for n := 1; n <= keyCacheMax+2; n++ {
		for i := range 3 * keyCacheSlots / keyCacheMax {
			k := []byte(strings.Repeat("k", n))
			k[n/2] = byte('a' + i%26)
			k[n-1] = byte('A' + i/26%26)
			keys = append(keys, string(k))
		}
	}
	keys = append(keys, "a", "aa", "aaa", `q"`, "tab\t", "é", "\u2028x")
	const goroutines = 8
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64)
			for round := range 20 {
				for i := range keys {
					k := keys[(i*(g+1)+round)%len(keys)]
					// A fresh copy of the bytes each time as well: the cache
					// must not depend on the key's address.
					if round%2 == 1 {
						k = string([]byte(k))
					}
					comma := (i+g)%2 == 0
					buf = appendJSONKey(buf[:0], k, comma)
					want := `"` + string(appendEscapedJSON(nil, k)) + `":`
					if comma {
						want = "," + want
					}
					if string(buf) != want {
						errs <- fmt.Errorf("key %q: got %q, want %q", k, buf, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
