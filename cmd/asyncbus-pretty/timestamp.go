package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// parseTime reads a time field: an RFC 3339 / ISO 8601 string (fraction
// and zone optional, 'T' or a space between date and clock, zone "Z",
// "+07:00", "+0700" or "+07"; without a zone the time is local), or a bare
// number of seconds, milliseconds, microseconds or nanoseconds since the
// Unix epoch, told apart by magnitude (zap's and zerolog's epoch
// encodings). Epoch times are shown in local time (or UTC with -utc).
func (p *parser) parseTime(v scalar) (time.Time, bool) {
	if !v.quoted && !strings.Contains(v.text, "-") || len(v.text) > 0 && v.text[0] == '-' {
		return p.parseEpoch(v.text)
	}
	t, ok := p.parseISO(v.text)
	if ok && p.utc {
		t = t.UTC()
	}
	return t, ok
}

// parseEpoch reads a Unix time in seconds (below 1e11), milliseconds
// (below 1e14), microseconds (below 1e17) or nanoseconds.
func (p *parser) parseEpoch(s string) (time.Time, bool) {
	if s == "" || s[0] == '-' {
		return time.Time{}, false
	}
	var t time.Time
	if whole, frac, ok := strings.Cut(s, "."); ok && isDigits(whole) && isDigits(frac) && len(whole) <= 18 {
		t = epochDecimal(whole, frac)
	} else if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch {
		case n < 1e11:
			t = time.Unix(n, 0)
		case n < 1e14:
			t = time.UnixMilli(n)
		case n < 1e17:
			t = time.UnixMicro(n)
		default:
			t = time.Unix(0, n)
		}
	} else {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f >= 1e19 {
			return time.Time{}, false
		}
		switch {
		case f < 1e11:
		case f < 1e14:
			f /= 1e3
		case f < 1e17:
			f /= 1e6
		default:
			f /= 1e9
		}
		sec, frac := math.Modf(f)
		t = time.Unix(int64(sec), int64(math.Round(frac*1e9)))
	}
	if p.utc {
		return t.UTC(), true
	}
	return t.Local(), true
}

// epochDecimal reads whole.frac exactly, in the unit whole's magnitude
// says (see parseEpoch).
func epochDecimal(whole, frac string) time.Time {
	n, _ := strconv.ParseInt(whole, 10, 64)
	unit := int64(1) // nanoseconds per unit
	switch {
	case n < 1e11:
		unit = 1e9
	case n < 1e14:
		unit = 1e6
	case n < 1e17:
		unit = 1e3
	}
	var f int64 // the fraction in nanoseconds
	scale := unit
	for _, c := range []byte(frac) {
		if scale /= 10; scale == 0 {
			break
		}
		f += int64(c-'0') * scale
	}
	per := 1e9 / unit // units per second
	return time.Unix(n/per, n%per*unit+f)
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// parseISO reads "2006-01-02T15:04:05.999999999Z07:00" and its variants.
func (p *parser) parseISO(s string) (time.Time, bool) {
	num := func(i, n int) int {
		if i+n > len(s) {
			return -1
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 60 {
		return time.Time{}, false
	}
	i, nsec := 19, 0
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if digits < 9 {
				nsec = nsec*10 + int(s[i]-'0')
			}
			digits++
			i++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			nsec *= 10
		}
	}
	loc := time.Local
	switch rest := s[i:]; {
	case rest == "":
	case rest == "Z" || rest == "z":
		loc = time.UTC
	case rest[0] == '+' || rest[0] == '-':
		var hh, mm int
		switch len(rest) {
		case 3: // +07
			hh, mm = num(i+1, 2), 0
		case 5: // +0700
			hh, mm = num(i+1, 2), num(i+3, 2)
		case 6: // +07:00
			if rest[3] != ':' {
				return time.Time{}, false
			}
			hh, mm = num(i+1, 2), num(i+4, 2)
		default:
			return time.Time{}, false
		}
		if hh < 0 || hh > 23 || mm < 0 || mm > 59 {
			return time.Time{}, false
		}
		off := (hh*60 + mm) * 60
		if rest[0] == '-' {
			off = -off
		}
		loc = p.zone(off)
	default:
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), true
}

// zone returns a fixed zone for a UTC offset, made once per offset: a log
// uses one or two.
func (p *parser) zone(off int) *time.Location {
	if off == 0 {
		return time.UTC
	}
	if loc, ok := p.zones[off]; ok {
		return loc
	}
	if p.zones == nil {
		p.zones = make(map[int]*time.Location)
	}
	loc := time.FixedZone("", off)
	if len(p.zones) < 64 {
		p.zones[off] = loc
	}
	return loc
}
