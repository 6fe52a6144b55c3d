package encode

// Source positions: the resolved-PC cache and the source field's forms
// (JSON object, "file:line", and Console's short form).

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
)

// appendSource writes the source field with the general code.
func (e *Encoder) appendSource(b []byte, src *srcEntry, sep string) []byte {
	s := state{e: e, c: e.c, buf: b, sep: sep}
	s.appendKey(slog.SourceKey)
	if s.c.json {
		s.appendJSONSource(src)
	} else {
		s.appendString(src.fileLine)
	}
	return s.buf
}

// srcEntry is the resolved, pre-formatted source position of one PC.
type srcEntry struct {
	pc       uintptr
	src      slog.Source
	fileLine string // "file:line", as slog's TextHandler writes it
	short    string // last directory and file plus ":line", for Console
}

// srcCache is a direct-mapped cache of resolved PCs. Each slot holds an
// immutable *srcEntry published with an atomic Store, so a reader sees
// either an old complete entry or a new complete one; a collision only
// costs a re-resolution.
var srcCache [1024]atomic.Pointer[srcEntry]

// sourceFor returns the source of pc, or nil if pc is 0 or unresolvable.
func sourceFor(pc uintptr) *srcEntry {
	if pc == 0 {
		return nil
	}
	slot := &srcCache[(pc>>2^pc>>12)%uintptr(len(srcCache))]
	if e := slot.Load(); e != nil && e.pc == pc {
		if e.src == (slog.Source{}) {
			return nil
		}
		return e
	}
	r := slog.NewRecord(zeroTime, 0, "", pc)
	e := &srcEntry{pc: pc, src: *r.Source()}
	e.fileLine = fmt.Sprintf("%s:%d", e.src.File, e.src.Line)
	e.short = fmt.Sprintf("%s:%d", shortFile(e.src.File), e.src.Line)
	slot.Store(e)
	if e.src == (slog.Source{}) {
		return nil
	}
	return e
}

func shortFile(f string) string {
	i := strings.LastIndexByte(f, '/')
	if i < 0 {
		return f
	}
	if j := strings.LastIndexByte(f[:i], '/'); j >= 0 {
		return f[j+1:]
	}
	return f
}

func (s *state) appendJSONSource(src *srcEntry) {
	s.buf = append(s.buf, '{')
	s.sep = ""
	if src.src.Function != "" {
		s.appendKey("function")
		s.appendString(src.src.Function)
	}
	if src.src.File != "" {
		s.appendKey("file")
		s.appendString(src.src.File)
	}
	if src.src.Line != 0 {
		s.appendKey("line")
		s.buf = strconv.AppendInt(s.buf, int64(src.src.Line), 10)
	}
	s.buf = append(s.buf, '}')
	s.sep = ","
}

func sourceGroup(src *slog.Source) slog.Value {
	var as []slog.Attr
	if src.Function != "" {
		as = append(as, slog.String("function", src.Function))
	}
	if src.File != "" {
		as = append(as, slog.String("file", src.File))
	}
	if src.Line != 0 {
		as = append(as, slog.Int("line", src.Line))
	}
	return slog.GroupValue(as...)
}
