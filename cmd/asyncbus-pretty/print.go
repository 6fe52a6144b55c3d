package main

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"

	"github.com/asyncbus/asyncbus/encode"
)

// printer turns each input line into its output line: a recognised record
// in asyncbus's Console format (with a badge in front of asyncbus's marker
// records), anything else unchanged. It is not safe for concurrent use.
type printer struct {
	parser
	filter
	enc   *encode.Encoder
	color bool
	rec   record
	// src is the source shown for the line being printed; the encoder's
	// ReplaceAttr hands it to the Console format's source column.
	src slog.Source
	// stack is the fate of the stack trace lines that may follow the last
	// line, a zap console record's: they are shown or hidden with it.
	stack stackFate
}

// stackFate says what becomes of stack trace lines after a record.
type stackFate uint8

const (
	noStack     stackFate = iota // the last line was no zap console record, or no stack line
	shownStack                   // they follow a record that was shown
	hiddenStack                  // they follow a record the filters left out
)

// newPrinter returns a printer writing colour if color is set.
func newPrinter(color, utc bool, f filter) *printer {
	p := &printer{parser: parser{utc: utc}, filter: f, color: color}
	p.enc = encode.New(encode.Options{
		Format:      encode.Console,
		Color:       color,
		AddSource:   true,
		ReplaceAttr: p.builtIn,
	})
	p.rec.vIndex = -1
	return p
}

// builtIn is the encoder's ReplaceAttr: it fills the source column from
// the parsed line and removes the level column of a line that had no
// level. Attributes (never a *slog.Source or a slog.Level here: the parsers
// make strings and groups) pass unchanged.
func (p *printer) builtIn(groups []string, a slog.Attr) slog.Attr {
	if groups != nil || a.Value.Kind() != slog.KindAny {
		return a
	}
	switch a.Value.Any().(type) {
	case *slog.Source:
		if p.src.File == "" {
			return slog.Attr{}
		}
		return slog.Any(slog.SourceKey, &p.src)
	case slog.Level:
		if !p.rec.hasLevel {
			return slog.Attr{}
		}
	}
	return a
}

// appendLine appends the output for one input line (without its '\n') to
// dst: one line ending in '\n', or nothing when the filters leave it out.
// The stack trace lines zap's console encoding writes below a record are
// shown or left out with it.
func (p *printer) appendLine(dst, line []byte) []byte {
	r := &p.rec
	if !p.parse(r, string(line)) {
		if p.stack != noStack && isStackLine(line) {
			if p.stack == hiddenStack {
				return dst
			}
		} else if p.stack = noStack; !p.passesUnparsed() {
			return dst
		}
		dst = append(dst, line...)
		return append(dst, '\n')
	}
	m := markerOf(r)
	passes := p.passes(r, m)
	p.stack = noStack
	if r.zapConsole {
		p.stack = hiddenStack
		if passes {
			p.stack = shownStack
		}
	}
	if !passes {
		return dst
	}
	if m.kind != noMarker {
		dst = p.appendBadge(dst, m)
	}
	p.src = r.source
	if r.logger != "" {
		r.attrs = append(r.attrs, slog.Attr{})
		copy(r.attrs[1:], r.attrs)
		r.attrs[0] = slog.String("logger", r.logger)
	}
	sr := slog.NewRecord(r.time, r.level, r.msg, 0)
	return p.enc.AppendRecord(dst, &sr, r.attrs)
}

// isStackLine reports whether line is a line of a Go stack trace as zap
// writes it: a function name ("pkg.Func", no spaces) or its position
// indented by a tab.
func isStackLine(line []byte) bool {
	if len(line) > 0 && line[0] == '\t' {
		return true
	}
	return len(line) > 0 && bytes.IndexByte(line, '.') > 0 && !bytes.ContainsAny(line, " \t")
}

// markerKind says which of asyncbus's own records a line is.
type markerKind uint8

const (
	noMarker     markerKind = iota
	dropMarker              // "asyncbus: records dropped", dropped=N
	sampleMarker            // "suppressed N similar records"
	otherMarker             // any other message starting "asyncbus:" (flight recorder, errors)
)

// marker is a marker record's kind and count (-1: none given).
type marker struct {
	kind  markerKind
	count int64
}

// markerOf recognises asyncbus's marker records: the drop marker (its
// count the "dropped" attribute), the sampler's marker (its count in the
// message) and any other message starting "asyncbus:" (its count the first
// of the attributes dropped, count, records, n that is an integer).
func markerOf(r *record) marker {
	switch {
	case r.msg == encode.DropMessage:
		return marker{dropMarker, attrCount(r, "dropped")}
	case strings.HasPrefix(r.msg, "asyncbus:"):
		return marker{otherMarker, attrCount(r, "dropped", "count", "records", "n")}
	case strings.HasPrefix(r.msg, "suppressed ") && (strings.HasSuffix(r.msg, " similar records") || r.msg == "suppressed 1 similar record"):
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(r.msg[len("suppressed "):], "s"), " similar record"), 10, 64)
		if err == nil && n >= 0 {
			return marker{sampleMarker, n}
		}
	}
	return marker{}
}

// attrCount returns the first top-level attribute among keys holding a
// non-negative integer, or -1.
func attrCount(r *record, keys ...string) int64 {
	for _, k := range keys {
		for _, a := range r.attrs {
			if a.Key == k && a.Value.Kind() == slog.KindString {
				if n, err := strconv.ParseInt(a.Value.String(), 10, 64); err == nil && n >= 0 {
					return n
				}
			}
		}
	}
	return -1
}

// appendBadge writes the marker's badge ("[DROPPED 42] ", "[SUPPRESSED 7] ",
// "[ASYNCBUS] "), in reverse video when colouring: red for drops, yellow
// for sampling, magenta for the others.
func (p *printer) appendBadge(dst []byte, m marker) []byte {
	name, color := "ASYNCBUS", "\x1b[1;7;35m"
	switch m.kind {
	case dropMarker:
		name, color = "DROPPED", "\x1b[1;7;31m"
	case sampleMarker:
		name, color = "SUPPRESSED", "\x1b[1;7;33m"
	}
	if p.color {
		dst = append(dst, color...)
	}
	dst = append(dst, '[')
	dst = append(dst, name...)
	if m.count >= 0 {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, m.count, 10)
	}
	dst = append(dst, ']')
	if p.color {
		dst = append(dst, "\x1b[0m"...)
	}
	return append(dst, ' ')
}
