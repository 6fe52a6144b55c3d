package encode

// time.Time inside slog.Any values, as its MarshalJSON writes it.

import (
	"slices"
	"time"
)

// Unix seconds of 0000-01-01T00:00:00Z and of 9999-12-31T23:59:59Z, widened
// by a day for the zone offset; times outside are not JSON (see below).
const (
	minJSONUnix = -62167219200 - 86400
	maxJSONUnix = 253402300799 + 86400
)

// appendMarshaledTime appends what t.MarshalJSON returns: RFC 3339 with
// nanoseconds, quoted. Where MarshalJSON fails (a year outside [0,9999], a
// zone offset of 24 hours or more) the plan stops. Times in the second of
// the newest record share its cached prefix; others are computed here
// from one zone lookup, without the date and clock calls of package time.
func appendMarshaledTime(b []byte, t time.Time) []byte {
	if c := stampLast.Load(); c != nil && c.unix == t.Unix() && c.loc == t.Location() {
		// stampLast is immutable once published (timefmt.go).
		return appendStamped(b, c, t.Nanosecond())
	}
	_, offset := t.Zone()
	unix := t.Unix()
	if offset <= -86400 || offset >= 86400 || unix < minJSONUnix || unix > maxJSONUnix {
		stopNative()
	}
	sec := unix + int64(offset)
	days, sod := sec/86400, sec%86400
	if sod < 0 {
		days, sod = days-1, sod+86400
	}
	year, month, day := civilDate(days)
	if year < 0 || year > 9999 {
		stopNative()
	}
	const room = len(`"2006-01-02T15:04:05.999999999+07:00"`)
	n := len(b)
	if cap(b)-n < room {
		b = slices.Grow(b, room)
	}
	w := b[n : n+room]
	w[0] = '"'
	put2(w[1:], year/100)
	put2(w[3:], year%100)
	w[5] = '-'
	put2(w[6:], month)
	w[8] = '-'
	put2(w[9:], day)
	w[11] = 'T'
	put2(w[12:], int(sod/3600))
	w[14] = ':'
	put2(w[15:], int(sod/60%60))
	w[17] = ':'
	put2(w[18:], int(sod%60))
	i := 20 + putNanos((*[10]byte)(w[20:30]), t.Nanosecond())
	if offset == 0 {
		w[i] = 'Z'
		i++
	} else {
		zone := offset / 60 // minutes, truncated as package time does
		w[i] = '+'
		if zone < 0 {
			w[i] = '-'
			zone = -zone
		}
		put2(w[i+1:], zone/60)
		w[i+3] = ':'
		put2(w[i+4:], zone%60)
		i += 6
	}
	w[i] = '"'
	return b[:n+i+1]
}

// appendStamped appends the JSON time of c's second with ns nanoseconds.
func appendStamped(b []byte, c *secStamp, ns int) []byte {
	b = append(b, c.qdate[:]...)
	b = appendNanos(b, ns)
	return append(b, c.zoneq[:c.zlen+1]...)
}

func put2(w []byte, v int) {
	w[0], w[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// civilDate returns the proleptic Gregorian date of the day days after
// 1970-01-01 (Howard Hinnant's civil_from_days).
func civilDate(days int64) (year, month, day int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11]
	d := doy - (153*mp+2)/5 + 1              // [1, 31]
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}
