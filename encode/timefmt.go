package encode

// Timestamps: RFC 3339 with milliseconds (Text, Logfmt), with nanoseconds
// (JSON) and the Console clock, through a per-second cache.

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

var zeroTime time.Time

// appendJSONTime appends t quoted, in RFC 3339 with nanoseconds, as slog's
// JSON handler does, and for a year outside [0,9999] slog's error string
// alone, as Go 1.27's slog writes it (earlier slogs write the time after
// it, which is not valid JSON).
func appendJSONTime(b []byte, t time.Time) []byte {
	var tmp secStamp
	c := stamp(t, &tmp)
	if c == nil {
		if y := t.Year(); y < 0 || y > 9999 {
			return append(b, `"`+errYear+`"`...)
		}
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	// Room for the longest stamp, so that every part below is a fixed-size
	// store into b's spare capacity, with no per-part length check or memmove.
	// One spare byte: the zone is stored as 8 bytes (zone, quote, padding).
	const room = len(`"2006-01-02T15:04:05.999999999+07:00"`) + 1
	n := len(b)
	if cap(b)-n < room {
		b = slices.Grow(b, room)
	}
	w := b[n : n+room]
	*(*[20]byte)(w) = c.qdate
	i := 20 + putNanos((*[10]byte)(w[20:]), t.Nanosecond())
	*(*[8]byte)(w[i:]) = c.zoneq
	return b[:n+i+int(c.zlen)+1]
}

// appendNanos appends ".123456789" for ns in [0, 1e9) with trailing zeros
// removed, and nothing for 0, as time.RFC3339Nano does.
func appendNanos(b []byte, ns int) []byte {
	var frac [10]byte
	return append(b, frac[:putNanos(&frac, ns)]...)
}

// putNanos writes ".123456789" for ns in [0, 1e9) to frac and returns how
// many of its bytes are the fraction as time.RFC3339Nano writes it: without
// trailing zeros, and 0 bytes for 0.
func putNanos(frac *[10]byte, ns int) int {
	if ns == 0 {
		return 0
	}
	// Unrolled, so that every index is a constant.
	u := uint(ns)
	q := u / 100
	r := u - q*100
	frac[8], frac[9] = digitPairs[2*r], digitPairs[2*r+1]
	u = q
	q = u / 100
	r = u - q*100
	frac[6], frac[7] = digitPairs[2*r], digitPairs[2*r+1]
	u = q
	q = u / 100
	r = u - q*100
	frac[4], frac[5] = digitPairs[2*r], digitPairs[2*r+1]
	u = q
	q = u / 100
	r = u - q*100
	frac[2], frac[3] = digitPairs[2*r], digitPairs[2*r+1]
	frac[0], frac[1] = '.', byte('0'+q)
	n := len(frac)
	for frac[n-1] == '0' {
		n--
	}
	return n
}

const errYear = "!ERROR:time.Time year outside of range [0,9999]"

// secStamp is the immutable, pre-formatted part of a timestamp that is the
// same for every instant within one second in one location.
type secStamp struct {
	unix  int64
	loc   *time.Location
	qdate [20]byte // `"2006-01-02T15:04:05`: the opening quote of a JSON time, then the date
	zoneq [8]byte  // "Z" or "+07:00", then the closing quote of a JSON time
	zlen  uint8    // length of the zone in zoneq
}

// date returns the "2006-01-02T15:04:05" part of c.
func (c *secStamp) date() []byte { return c.qdate[1:] }

// stampCache holds the four newest seconds seen, in any locations, so that
// a record's time, an observed timestamp a second behind it and a time attr
// in another zone do not evict each other. Readers Load a pointer to an
// immutable secStamp; writers publish a fully built new one with Store, so
// no reader can observe a partially written value (atomic.Pointer gives the
// needed happens-before edge). A lost race only costs a rebuild.
var stampCache [4]atomic.Pointer[secStamp]

// stampLast is the stamp most recently published to stampCache, the one a
// record's time almost always falls in: stamp's hit path is a single Load
// of it and a compare. Its Load pairs with the Store in stampSlow, which
// happens after the secStamp is fully built, so a reader sees it complete;
// the value is never modified after publication, and a stale pointer only
// sends the caller to the slow path.
var stampLast atomic.Pointer[secStamp]

// stamp returns the per-second prefix for t, or nil when t's year is
// outside [0,9999] or its zone offset is 100 hours or more
// (time.FixedZone allows any), which the fixed-size fields here cannot
// hold: callers then fall back to time.Time.AppendFormat, as the standard
// library formats such times differently. The result is either
// a published, immutable cache entry or tmp, filled in; it is valid as long
// as tmp is.
func stamp(t time.Time, tmp *secStamp) *secStamp {
	if c := stampLast.Load(); c != nil && c.unix == t.Unix() && c.loc == t.Location() {
		return c
	}
	return stampSlow(t, tmp)
}

// stampSlow looks t's second up in stampCache. On a miss it builds the
// prefix in tmp and publishes a heap copy only when t's second is newer
// than the oldest cached one: record times move forward, so that costs one
// allocation per second, while old or scattered time attrs are formatted
// without allocating and never thrash the cache.
func stampSlow(t time.Time, tmp *secStamp) *secStamp {
	sec, loc := t.Unix(), t.Location()
	victim, vsec := 0, int64(math.MaxInt64)
	for i := range stampCache {
		c := stampCache[i].Load() // pairs with the Store below: c is complete and immutable
		if c == nil {
			victim, vsec = i, math.MinInt64
			continue
		}
		if c.unix == sec && c.loc == loc {
			return c
		}
		if c.unix < vsec {
			victim, vsec = i, c.unix
		}
	}
	year, month, day := t.Date()
	_, offset := t.Zone()
	if year < 0 || year > 9999 || offset <= -100*3600 || offset >= 100*3600 {
		return nil
	}
	hour, min, s := t.Clock()
	c := tmp
	*c = secStamp{unix: sec, loc: loc}
	d := c.qdate[:0]
	d = append(d, '"')
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
	z := c.zoneq[:0]
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
	c.zlen = uint8(len(z))
	_ = append(z, '"')
	if sec > vsec {
		p := new(secStamp)
		*p = *c
		// Both Stores publish p fully built (p is never written again):
		// a reader that Loads p sees every field above.
		stampCache[victim].Store(p)
		stampLast.Store(p)
		return p
	}
	return c
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
	var tmp secStamp
	c := stamp(t, &tmp)
	if c == nil {
		// Same algorithm as log/slog for years it cannot cache.
		const prefixLen = len("2006-01-02T15:04:05.000")
		n := len(b)
		t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
	}
	// Two spare bytes: the zone is stored as 8 bytes (zone, quote, padding).
	const room = len("2006-01-02T15:04:05.000+07:00") + 2
	n := len(b)
	if cap(b)-n < room {
		b = slices.Grow(b, room)
	}
	w := b[n : n+room]
	*(*[19]byte)(w) = [19]byte(c.qdate[1:])
	ms := uint(t.Nanosecond()) / 1e6
	q := ms / 100
	r := ms - q*100
	w[19], w[20], w[21], w[22] = '.', byte('0'+q), digitPairs[2*r], digitPairs[2*r+1]
	*(*[8]byte)(w[23:]) = c.zoneq
	return b[:n+23+int(c.zlen)]
}

func appendMillis(b []byte, t time.Time) []byte {
	ms := t.Nanosecond() / 1e6
	return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
}

// appendClock appends "15:04:05.000" in t's location (Console format).
func appendClock(b []byte, t time.Time) []byte {
	var tmp secStamp
	if c := stamp(t, &tmp); c != nil {
		b = append(b, c.date()[11:]...)
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
