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
	// statusIndex is the index in attrs of a "status" naming a level
	// (Datadog's level key), the level of a line that has no level
	// field: a "status" is an HTTP status as often; -1 if none.
	statusIndex int
	// zapDev says the line is zap's development JSON (its first key "L"),
	// whose built-in keys are T, L, N, C, M.
	zapDev bool
	// zapConsole says the line is zap's console encoding, which writes an
	// entry's stack trace on the lines below it.
	zapConsole bool
	// hasError reports an "error" or "err" field: the level of a logr
	// funcr Error line, which has no level field.
	hasError bool
}

// reset empties r for the next line, keeping its attribute storage.
func (r *record) reset() {
	clear(r.attrs) // drop references into the previous line
	*r = record{attrs: r.attrs[:0], vIndex: -1, statusIndex: -1}
}

// isRecord reports whether the parsed fields make a log record: a line
// that has neither a message nor a level is some other data and is passed
// through unchanged.
func (r *record) isRecord() bool { return r.hasMsg || r.hasLevel }

// finish applies the fallbacks once every field is known: a "status"
// level, the verbosity or the error field stands in for a missing level.
func (r *record) finish() {
	if r.hasLevel {
		return
	}
	if r.statusIndex >= 0 {
		r.level, _, _ = parseLevel(r.attrs[r.statusIndex].Value.String(), false)
		r.hasLevel = true
		r.attrs = append(r.attrs[:r.statusIndex], r.attrs[r.statusIndex+1:]...)
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
// not a time), appends it as an attribute. The keys are those of slog,
// zap, zerolog, logrus, phuslu/log, logr, pino and bunyan, and of the
// Google Cloud, Elastic (ECS) and Datadog conventions; ECS's ecs.version
// is left out.
func (p *parser) field(r *record, key string, v scalar) {
	role := key
	if r.zapDev {
		role = zapDevKey(key)
	}
	switch role {
	case "time", "ts", "timestamp", "@timestamp":
		if r.time.IsZero() {
			if t, ok := p.parseTime(v); ok {
				r.time = t
				return
			}
		}
	case "level", "lvl", "severity", "log.level":
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
	case "status":
		if v.quoted && r.statusIndex < 0 {
			if _, _, ok := parseLevel(v.text, false); ok {
				r.statusIndex = len(r.attrs)
			}
		}
	case "source", "caller", "file", "log.origin.file.name", "log.origin.file.line", "log.origin.function", "logger.method_name":
		if sourceField(r, role, v) {
			return
		}
	case "ecs.version": // the schema's version, the same on every line
		if v.quoted {
			return
		}
	case "logger", "log.logger", "logger.name":
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

// sourceField assigns a field naming the source, whole ("file:line":
// slog Text's source, zap's and Datadog's caller, logrus's file) or in
// parts (ECS's log.origin fields, Datadog's logger.method_name), and
// reports whether it did.
func sourceField(r *record, key string, v scalar) bool {
	switch key {
	case "log.origin.file.name":
		if r.source.File == "" && v.quoted && v.text != "" {
			r.source.File = v.text
			return true
		}
	case "log.origin.file.line":
		if n, err := strconv.Atoi(v.text); err == nil && n >= 0 && r.source.Line == 0 && !v.quoted {
			r.source.Line = n
			return true
		}
	case "log.origin.function", "logger.method_name":
		if r.source.Function == "" && v.quoted {
			r.source.Function = v.text
			return true
		}
	default:
		if r.source.File == "" && v.text != "" {
			if src, ok := parseSourcePos(v.text); ok {
				src.Function = r.source.Function
				r.source = src
				return true
			}
		}
	}
	return false
}

// zapDevKey maps the keys of zap's development encoder config to their
// production names.
func zapDevKey(key string) string {
	switch key {
	case "T":
		return "ts"
	case "L":
		return "level"
	case "N":
		return "logger"
	case "C":
		return "caller"
	case "M":
		return "msg"
	}
	return key
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
