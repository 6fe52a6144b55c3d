package encode

// Timestamps: RFC 3339 with milliseconds (Text, Logfmt), with nanoseconds
// (JSON) and the Console clock, through a per-second cache.

import (
	"math"
	"sync/atomic"
	"time"
)

var zeroTime time.Time

// appendJSONTime appends t quoted, in RFC 3339 with nanoseconds, as slog's
// JSON handler does (including its error text, followed by the time, for
// years outside [0,9999]).
func appendJSONTime(b []byte, t time.Time) []byte {
	c, ok := stamp(t)
	if !ok {
		b = append(b, `"`+errYear+`""`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	b = append(b, '"')
	b = append(b, c.date[:]...)
	b = appendNanos(b, t.Nanosecond())
	b = append(b, c.zone[:c.zlen]...)
	return append(b, '"')
}

// appendNanos appends ".123456789" for ns in [0, 1e9) with trailing zeros
// removed, and nothing for 0, as time.RFC3339Nano does.
func appendNanos(b []byte, ns int) []byte {
	if ns == 0 {
		return b
	}
	var frac [10]byte
	frac[0] = '.'
	u := uint(ns)
	for i := 8; i >= 2; i -= 2 {
		q := u / 100
		r := u - q*100
		frac[i], frac[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		u = q
	}
	frac[1] = byte('0' + u)
	n := len(frac)
	for frac[n-1] == '0' {
		n--
	}
	return append(b, frac[:n]...)
}

const errYear = "!ERROR:time.Time year outside of range [0,9999]"

// secStamp is the immutable, pre-formatted part of a timestamp that is the
// same for every instant within one second in one location.
type secStamp struct {
	unix int64
	loc  *time.Location
	date [19]byte // "2006-01-02T15:04:05"
	zone [6]byte  // "Z" or "+07:00"
	zlen int
}

// stampCache holds the four newest seconds seen, in any locations, so that
// a record's time, an observed timestamp a second behind it and a time attr
// in another zone do not evict each other. Readers Load a pointer to an
// immutable secStamp; writers publish a fully built new one with Store, so
// no reader can observe a partially written value (atomic.Pointer gives the
// needed happens-before edge). A lost race only costs a rebuild.
var stampCache [4]atomic.Pointer[secStamp]

// stamp returns the per-second prefix for t, from the cache when it holds
// t's second. On a miss it builds the prefix on the stack and publishes a
// heap copy only when t's second is newer than the oldest cached one: record
// times move forward, so that costs one allocation per second, while old or
// scattered time attrs are formatted without allocating and never thrash
// the cache. It reports false when t's year is outside [0,9999]; callers
// then fall back to time.Time.AppendFormat, as the standard library formats
// such years differently.
func stamp(t time.Time) (secStamp, bool) {
	sec, loc := t.Unix(), t.Location()
	victim, vsec := 0, int64(math.MaxInt64)
	for i := range stampCache {
		c := stampCache[i].Load()
		if c == nil {
			victim, vsec = i, math.MinInt64
			continue
		}
		if c.unix == sec && c.loc == loc {
			return *c, true
		}
		if c.unix < vsec {
			victim, vsec = i, c.unix
		}
	}
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return secStamp{}, false
	}
	hour, min, s := t.Clock()
	c := secStamp{unix: sec, loc: loc}
	d := c.date[:0]
	d = append4(d, year)
	d = append(d, '-')
	d = append2(d, int(month))
	d = append(d, '-')
	d = append2(d, day)
	d = append(d, 'T')
	d = append2(d, hour)
	d = append(d, ':')
	d = append2(d, min)
	d = append(d, ':')
	_ = append2(d, s)
	_, offset := t.Zone()
	z := c.zone[:0]
	if offset == 0 {
		z = append(z, 'Z')
	} else {
		zone := offset / 60 // minutes, truncated as package time does
		if zone < 0 {
			z = append(z, '-')
			zone = -zone
		} else {
			z = append(z, '+')
		}
		z = append2(z, zone/60)
		z = append(z, ':')
		z = append2(z, zone%60)
	}
	c.zlen = len(z)
	if sec > vsec {
		p := new(secStamp)
		*p = c
		stampCache[victim].Store(p)
	}
	return c, true
}

func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10%10), byte('0'+v%10))
}

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// appendRFC3339Millis appends t in RFC 3339 with exactly three fractional
// digits, as slog's TextHandler does.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	c, ok := stamp(t)
	if !ok {
		// Same algorithm as log/slog for years it cannot cache.
		const prefixLen = len("2006-01-02T15:04:05.000")
		n := len(b)
		t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
	}
	b = append(b, c.date[:]...)
	b = appendMillis(b, t)
	return append(b, c.zone[:c.zlen]...)
}

func appendMillis(b []byte, t time.Time) []byte {
	ms := t.Nanosecond() / 1e6
	return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
}

// appendClock appends "15:04:05.000" in t's location (Console format).
func appendClock(b []byte, t time.Time) []byte {
	if c, ok := stamp(t); ok {
		b = append(b, c.date[11:]...)
	} else {
		h, m, s := t.Clock()
		b = append2(b, h)
		b = append(b, ':')
		b = append2(b, m)
		b = append(b, ':')
		b = append2(b, s)
	}
	return appendMillis(b, t)
}
