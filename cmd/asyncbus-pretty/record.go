package main

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// record is one parsed log line: the built-in fields every format has in
// some spelling, and the remaining fields as attributes in line order.
type record struct {
	time     time.Time // zero: the line has none
	level    slog.Level
	hasLevel bool
	msg      string
	hasMsg   bool
	source   slog.Source // File empty: the line has none
	logger   string
	attrs    []slog.Attr

	// vIndex is the index in attrs of a numeric "v" (klog's and logr's
	// verbosity), the level of a line that has no level field; -1 if none.
	vIndex int
	// hasError reports an "error" or "err" field: the level of a logr
	// funcr Error line, which has no level field.
	hasError bool
}

// reset empties r for the next line, keeping its attribute storage.
func (r *record) reset() {
	clear(r.attrs) // drop references into the previous line
	*r = record{attrs: r.attrs[:0], vIndex: -1}
}

// isRecord reports whether the parsed fields make a log record: a line
// that has neither a message nor a level is some other data and is passed
// through unchanged.
func (r *record) isRecord() bool { return r.hasMsg || r.hasLevel }

// finish applies the fallbacks once every field is known: the verbosity
// or the error field stands in for a missing level.
func (r *record) finish() {
	if r.hasLevel {
		return
	}
	if r.vIndex >= 0 {
		v, _ := strconv.Atoi(r.attrs[r.vIndex].Value.String())
		r.level, r.hasLevel = slog.Level(-v), true
		r.attrs = append(r.attrs[:r.vIndex], r.attrs[r.vIndex+1:]...)
		return
	}
	if r.hasError {
		r.level, r.hasLevel = slog.LevelError, true
	}
}

// scalar is one field value as written in the line: quoted says whether it
// was a string (JSON string, quoted text value) or a bare token (number,
// true, false, null, unquoted text value).
type scalar struct {
	text   string
	quoted bool
}

// field assigns one top-level field to its built-in role, or, when the key
// has none or the value does not fit it (a second "msg", a "time" that is
// not a time), appends it as an attribute.
func (p *parser) field(r *record, key string, v scalar) {
	switch key {
	case "time", "ts", "timestamp":
		if r.time.IsZero() {
			if t, ok := p.parseTime(v); ok {
				r.time = t
				return
			}
		}
	case "level", "lvl", "severity":
		if !r.hasLevel {
			if l, exact, ok := parseLevel(v.text, !v.quoted); ok {
				r.level, r.hasLevel = l, true
				if exact {
					return
				}
				// dpanic, panic: shown as ERROR and FATAL, the original
				// name kept as an attribute.
			}
		}
	case "msg", "message":
		if !r.hasMsg {
			r.msg, r.hasMsg = v.text, true
			return
		}
	case "source", "caller":
		if r.source.File == "" && v.text != "" {
			if src, ok := parseSourcePos(v.text); ok {
				r.source = src
				return
			}
		}
	case "logger":
		if r.logger == "" { // funcr writes "logger":"" for the unnamed logger
			r.logger = v.text
			return
		}
	case "v":
		if !v.quoted && isSmallUint(v.text) && r.vIndex < 0 {
			r.vIndex = len(r.attrs)
		}
	case "error", "err":
		r.hasError = true
	}
	r.attrs = append(r.attrs, slog.String(key, v.text))
}

// parseSourcePos splits "file:line" (zap's caller, slog Text's source).
func parseSourcePos(s string) (slog.Source, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return slog.Source{}, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return slog.Source{}, false
	}
	return slog.Source{File: s[:i], Line: n}, true
}

// isSmallUint reports whether s is a decimal integer in [0, 127] (a logr
// verbosity).
func isSmallUint(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 127 && s[0] != '+'
}
