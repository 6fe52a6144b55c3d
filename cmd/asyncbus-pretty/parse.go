package main

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// parser turns log lines into records. It is not safe for concurrent use.
type parser struct {
	utc   bool                   // show times in UTC (-utc)
	zones map[int]*time.Location // fixed zones by offset, see zone
	year  int                    // klog's year, see klogYear
	date  time.Time              // the Console clock's date, see today
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
	if strings.TrimLeft(s, " \t")[0] == '{' {
		if !p.parseJSON(r, s) {
			return false
		}
	} else if !p.parsePlain(r, stripColor(s)) {
		return false
	}
	r.finish()
	return r.isRecord()
}

// parsePlain parses a line that is not JSON: zap's console encoding (tab
// separated), asyncbus's Console (starting with a clock), klog, or
// key=value text.
func (p *parser) parsePlain(r *record, s string) bool {
	if s == "" { // nothing but colour sequences
		return false
	}
	if pre, ok := parseSeqPrefix([]byte(s)); ok { // seq.go: asyncbus's Options.Features.Sequence
		if !p.parsePlain(r, string(pre.rest)) {
			return false
		}
		if pre.drop > 0 { // a drop marker's prefix
			r.attrs = append([]slog.Attr{slog.String("drop_seq", strconv.FormatUint(pre.seq, 10)), slog.String("run", pre.run),
				slog.String("drop_count", strconv.FormatUint(pre.drop, 10))}, r.attrs...)
			return true
		}
		r.attrs = append([]slog.Attr{slog.String("seq", strconv.FormatUint(pre.seq, 10)), slog.String("run", pre.run)}, r.attrs...)
		return true
	}
	if strings.IndexByte(s, '\t') >= 0 {
		if p.parseZapConsole(r, s) {
			return true
		}
		r.reset()
	}
	switch c := s[0]; {
	case c >= '0' && c <= '2' && len(s) > 2 && s[2] == ':':
		if p.parseConsole(r, s) {
			return true
		}
		r.reset()
	case c == 'I' || c == 'W' || c == 'E' || c == 'F':
		if p.parseKlog(r, s) {
			return true
		}
		r.reset()
	}
	return p.parseText(r, s)
}

// stripColor removes the ANSI colour sequences (ESC [ digits ; m) a
// coloured Console or zap console line holds.
func stripColor(s string) string {
	i := strings.Index(s, "\x1b[")
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i >= 0 {
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			b = append(b, s[:i]...)
			s = s[j+1:]
		} else {
			b = append(b, s[:i+2]...)
			s = s[i+2:]
		}
		i = strings.Index(s, "\x1b[")
	}
	return string(append(b, s...))
}
