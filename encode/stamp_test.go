package encode

import (
	"fmt"
	"math"
	"strconv"
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
					want = `"` + errYear + `"` + want
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
