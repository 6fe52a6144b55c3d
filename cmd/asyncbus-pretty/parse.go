package main

import (
	"strings"
	"time"
	"unicode/utf8"
)

// parser turns log lines into records. It is not safe for concurrent use.
type parser struct {
	utc   bool                   // show times in UTC (-utc)
	zones map[int]*time.Location // fixed zones by offset, see zone
	year  int                    // klog's year, see klogYear
}

// parse fills r from line and reports whether it is a log record in one of
// the recognised formats; when it is not, the line is to be passed through
// unchanged. Invalid UTF-8 in a recognised line reads as U+FFFD.
func (p *parser) parse(r *record, line string) bool {
	r.reset()
	s := strings.TrimRight(line, " \t\r")
	if s == "" {
		return false
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var ok bool
	switch c := s[0]; {
	case strings.TrimLeft(s, " \t")[0] == '{':
		ok = p.parseJSON(r, s)
	case c == 'I' || c == 'W' || c == 'E' || c == 'F':
		ok = p.parseKlog(r, s)
		if !ok {
			r.reset()
			ok = p.parseText(r, s)
		}
	default:
		ok = p.parseText(r, s)
	}
	if !ok {
		return false
	}
	r.finish()
	return r.isRecord()
}
