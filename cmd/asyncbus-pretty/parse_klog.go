package main

import (
	"strings"
	"time"
)

// parseKlog parses klog's text header and what follows it:
//
//	I1201 12:00:00.000000   1234 file.go:12] "msg" key="value" n=1
//	E1201 12:00:00.000000   1234 file.go:12] unstructured message text
//
// The severity letter is the level, the clock the time (in the current
// year, local time: klog writes neither), file:line the source; the thread
// id is not shown. After "] " a quoted message followed by key=value pairs
// (parsed as parseText does) is structured; anything else is the message
// as written.
func (p *parser) parseKlog(r *record, s string) bool {
	// I1201 12:00:00.000000 is 21 bytes.
	if len(s) < 21 || s[5] != ' ' || s[8] != ':' || s[11] != ':' || s[14] != '.' {
		return false
	}
	level, ok := klogLevel(s[0])
	if !ok {
		return false
	}
	digits := func(t string) (int, bool) {
		n := 0
		for _, c := range []byte(t) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	month, ok1 := digits(s[1:3])
	day, ok2 := digits(s[3:5])
	hour, ok3 := digits(s[6:8])
	minute, ok4 := digits(s[9:11])
	sec, ok5 := digits(s[12:14])
	micro, ok6 := digits(s[15:21])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return false
	}
	rest := strings.TrimLeft(s[21:], " ")
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != ' ' {
		return false
	}
	rest = rest[i+1:]
	end := strings.Index(rest, "] ")
	if end < 0 {
		if !strings.HasSuffix(rest, "]") {
			return false
		}
		end = len(rest) - 1
	}
	src, ok := parseSourcePos(rest[:end])
	if !ok {
		return false
	}
	loc := time.Local
	if p.utc {
		loc = time.UTC
	}
	r.time = time.Date(p.klogYear(), time.Month(month), day, hour, minute, sec, micro*1000, loc)
	r.level, r.hasLevel = level, true
	r.source = src
	r.msg, r.hasMsg = "", true
	if end+2 > len(rest) {
		return true
	}
	body := rest[end+2:]
	if body != "" && body[0] == '"' {
		if msg, j, ok := unquote(body, 0); ok && (j == len(body) || body[j] == ' ') {
			n := len(r.attrs)
			if p.parseText(r, body[j:]) {
				r.msg = msg
				return true
			}
			clear(r.attrs[n:])
			r.attrs = r.attrs[:n]
		}
	}
	r.msg = body
	return true
}

// klogYear is the year klog lines are taken to be in: the current one.
func (p *parser) klogYear() int {
	if p.year == 0 {
		p.year = time.Now().Year()
	}
	return p.year
}
