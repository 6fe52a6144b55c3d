package main

import (
	"log/slog"
	"strings"
	"time"
)

// parseConsole parses asyncbus's Console format:
//
//	15:04:05.000 LEVEL dir/file.go:12 message key=value ...
//
// The clock is taken to be today, local time, and shown as written (the
// line has no date or zone); the source column is optional. The message
// is quoted when it holds control characters, else raw: the key=value
// pairs that end the line are the attributes, so a raw message ending in
// "k=v" words reads as attributes (and prints the same).
func (p *parser) parseConsole(r *record, s string) bool {
	t, ok := p.consoleClock(s)
	if !ok || len(s) < 14 || s[12] != ' ' {
		return false
	}
	rest := s[13:]
	name, rest, _ := strings.Cut(rest, " ")
	level, _, ok := parseLevel(name, false)
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, " ")
	if tok, after, ok := consoleToken(rest); ok {
		if src, ok := parseSourcePos(tok); ok && strings.HasSuffix(src.File, ".go") {
			r.source = src
			rest = strings.TrimPrefix(after, " ")
		}
	}
	r.time, r.level, r.hasLevel = t, level, true
	return p.consoleBody(r, rest)
}

// consoleClock reads the "15:04:05.000" that starts s, on today's date.
func (p *parser) consoleClock(s string) (time.Time, bool) {
	if len(s) < 12 || s[2] != ':' || s[5] != ':' || s[8] != '.' {
		return time.Time{}, false
	}
	var n [4]int
	for i, f := range [4][2]int{{0, 2}, {3, 5}, {6, 8}, {9, 12}} {
		for _, c := range []byte(s[f[0]:f[1]]) {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			n[i] = n[i]*10 + int(c-'0')
		}
	}
	if n[0] > 23 || n[1] > 59 || n[2] > 60 {
		return time.Time{}, false
	}
	y, m, d := p.today()
	return time.Date(y, m, d, n[0], n[1], n[2], n[3]*1e6, time.Local), true
}

// today is the date Console clocks are taken to be on.
func (p *parser) today() (int, time.Month, int) {
	if p.date.IsZero() {
		p.date = time.Now()
	}
	return p.date.Date()
}

// consoleToken returns the column at the start of s, quoted (Go syntax)
// or up to a space, and what follows it.
func consoleToken(s string) (tok, after string, ok bool) {
	if s == "" {
		return "", "", false
	}
	if s[0] == '"' {
		v, j, ok := unquote(s, 0)
		if !ok || j < len(s) && s[j] != ' ' {
			return "", "", false
		}
		return v, s[j:], true
	}
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return s, "", true
	}
	return s[:i], s[i:], true
}

// consoleBody reads "message key=value ...": the message (quoted, or raw
// up to the key=value pairs that end s) and the pairs as fields.
func (p *parser) consoleBody(r *record, s string) bool {
	r.hasMsg = true
	if s != "" && s[0] == '"' {
		if msg, j, ok := unquote(s, 0); ok && (j == len(s) || s[j] == ' ') {
			n := len(r.attrs)
			if p.parseText(r, s[j:]) {
				r.msg = msg
				return true
			}
			clear(r.attrs[n:])
			r.attrs = r.attrs[:n]
		}
	}
	pairs := 0 // where the trailing pairs start
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		if key, j, ok := textKey(s, i); ok && key != "" {
			if _, end, ok := textValue(s, j); ok {
				i = end
				continue
			}
		}
		// Not a pair: a word of the message.
		end := strings.IndexByte(s[i:], ' ')
		if end < 0 {
			end = len(s) - i
		}
		i += end
		pairs = i
	}
	r.msg = strings.TrimRight(s[:pairs], " ")
	return p.parseText(r, s[pairs:])
}

// parseZapConsole parses zap's console encoding, as zap's development
// config and asyncbus's ZapConsole write it:
//
//	TIME<tab>LEVEL<tab>LOGGER<tab>CALLER<tab>MESSAGE<tab>{"k": "v"}
//
// The time, logger, caller (with a function after it) and the fields are
// optional; the level is required. A stack trace on the following lines
// is passed through.
func (p *parser) parseZapConsole(r *record, s string) bool {
	var buf [8]string
	cols := buf[:0]
	for len(cols) < len(buf)-1 {
		i := strings.IndexByte(s, '\t')
		if i < 0 {
			break
		}
		cols, s = append(cols, s[:i]), s[i+1:]
	}
	cols = append(cols, s)
	if t, ok := p.parseTime(scalar{text: cols[0]}); ok && len(cols) > 1 {
		r.time, cols = t, cols[1:]
	}
	level, exact, ok := parseLevel(cols[0], false)
	if !ok {
		return false
	}
	r.level, r.hasLevel, r.zapConsole = level, true, true
	if !exact {
		r.attrs = append(r.attrs, slog.String("level", cols[0]))
	}
	cols = cols[1:]
	if n := len(cols); n > 0 && strings.HasPrefix(cols[n-1], "{") {
		if !p.zapFields(r, cols[n-1]) {
			return false
		}
		cols = cols[:n-1]
	}
	if n := len(cols); n > 0 {
		r.msg, r.hasMsg = cols[n-1], true
		cols = cols[:n-1]
	}
	return zapColumns(r, cols)
}

// zapFields adds the fields of zap console's JSON object as attributes.
func (p *parser) zapFields(r *record, s string) bool {
	a, end, ok := p.jsonObject("", s, 0, 1)
	if !ok || skipSpace(s, end) != len(s) {
		return false
	}
	if a.Value.Kind() == slog.KindGroup {
		r.attrs = append(r.attrs, a.Value.Group()...)
	}
	return true
}

// zapColumns assigns the columns between zap console's level and message:
// the logger, the caller, then the function.
func zapColumns(r *record, cols []string) bool {
	for _, c := range cols {
		switch src, ok := parseSourcePos(c); {
		case ok && r.source.File == "":
			r.source = src
		case r.source.File == "" && r.logger == "":
			r.logger = c
		case r.source.File != "" && r.source.Function == "":
			r.source.Function = c
		default:
			return false
		}
	}
	return true
}
