package encode

import (
	"math"
	"sync/atomic"
	"time"
)

// secStamp is the immutable, pre-formatted part of a timestamp that is the
// same for every instant within one second in one location.
type secStamp struct {
	unix int64
	loc  *time.Location
	date [19]byte // "2006-01-02T15:04:05"
	zone [6]byte  // "Z" or "+07:00"
	zlen int
}

// stampCache holds the most recently used second for up to four locations,
// so that records and time attrs in different zones do not evict each other. Readers Load a pointer to an
// immutable secStamp; writers publish a fully built new one with Store, so
// no reader can observe a partially written value (atomic.Pointer gives the
// needed happens-before edge). A lost race only costs a rebuild.
var stampCache [4]atomic.Pointer[secStamp]

// stamp returns the cached per-second prefix for t, building (and publishing)
// a new one on a miss. It reports false when t's year is outside [0,9999];
// callers then fall back to time.Time.AppendFormat, as the standard library
// formats such years differently.
func stamp(t time.Time) (*secStamp, bool) {
	sec, loc := t.Unix(), t.Location()
	for i := range stampCache {
		if c := stampCache[i].Load(); c != nil && c.unix == sec && c.loc == loc {
			return c, true
		}
	}
	// A miss: remember where a new entry would go: the slot already used by
	// loc, else an empty one, else the oldest second.
	victim, vsec, vsame := 0, int64(math.MaxInt64), false
	for i := range stampCache {
		c := stampCache[i].Load()
		switch {
		case c == nil:
			if !vsame {
				victim, vsec = i, math.MinInt64
			}
		case c.loc == loc:
			if c.unix == sec {
				return c, true
			}
			victim, vsame = i, true
		case !vsame && c.unix < vsec:
			victim, vsec = i, c.unix
		}
	}
	slot := &stampCache[victim]
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return nil, false
	}
	hour, min, s := t.Clock()
	c := &secStamp{unix: sec, loc: loc}
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
	slot.Store(c)
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
