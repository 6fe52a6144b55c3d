package encode

// The general path: slog's handleState, used whenever ReplaceAttr is set,
// for the Console format, and by the fast paths for the attributes that need
// resolution or recursion (KindAny, KindLogValuer, KindGroup).

import (
	"fmt"
	"log/slog"
	"sync"
)

// slowAttr writes a with the general code: sep is the pending separator and
// prefix the text-like key prefix. It returns the separator due next and
// whether anything was written.
func (e *Encoder) slowAttr(b []byte, a slog.Attr, sep, prefix string, bud *budget) ([]byte, string, bool) {
	s := state{e: e, c: e.c, buf: b, sep: sep, bud: *bud}
	if len(prefix) > 0 {
		s.growPrefix()
		s.prefix = append(s.prefix, prefix...)
	}
	ok := s.appendAttr(a, 0)
	b, sep, *bud = s.buf, s.sep, s.bud
	s.free()
	return b, sep, ok
}

// generalAttr writes one of a record's attrs with the general code, for the
// text-like formats. s is kept across the record's attrs (created here on
// first use), so that a record takes its pooled key prefix once. The
// general code leaves s's prefix as it found it (a group that turns out
// empty included, see appendResolved), so the fast path may write the
// attrs that follow.
func (e *Encoder) generalAttr(s *state, b []byte, a slog.Attr, prefix string, bud *budget) []byte {
	if s.e == nil {
		*s = state{e: e, c: e.c, sep: " ", bud: *bud}
		if len(prefix) > 0 {
			s.growPrefix()
			s.prefix = append(s.prefix, prefix...)
		}
	}
	s.buf = b
	s.appendAttr(a, 0)
	*bud = s.bud
	return s.buf
}

// maxDepth bounds group nesting. slog itself recurses without bound (a
// LogValuer that returns a group containing itself overflows the stack);
// beyond this depth a group is written as an error string instead.
const maxDepth = 4096

const errDepth = "!ERROR:group nesting too deep"

// state is the per-call encoding state; it mirrors slog's handleState.
type state struct {
	e      *Encoder
	c      *config
	buf    []byte
	sep    string // separator to write before the next key
	prefix []byte // text-like formats: dotted prefix of open groups
	// prefixBuf is the pooled storage behind prefix, nil until needed.
	prefixBuf *[]byte
	groups    *[]string // open groups for ReplaceAttr; nil without ReplaceAttr
	bud       budget    // what is left of this record's work budget
}

// groupPool recycles the group-name slices passed to ReplaceAttr, as slog
// does, so that the ReplaceAttr path does not allocate per record either.
var groupPool = sync.Pool{New: func() any {
	s := make([]string, 0, 10)
	return &s
}}

func newState(e *Encoder, buf []byte, sep string) state {
	s := state{e: e, c: e.c, buf: buf, sep: sep, bud: newBudget(len(buf))}
	if e.c.rep != nil {
		s.groups = groupPool.Get().(*[]string)
	}
	return s
}

// addOpenGroups records the groups already open in the pre-encoded state
// as the ReplaceAttr group path.
func (s *state) addOpenGroups() {
	if s.groups != nil {
		*s.groups = append(*s.groups, s.e.groups[:s.e.nOpenGroups]...)
	}
}

// prefixPool recycles key-prefix buffers for text-like formats; a state
// takes one only when a record actually has groups.
var prefixPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 128)
	return &b
}}

// growPrefix makes sure s.prefix has pooled storage before it is appended
// to, keeping what it already holds (a prefix set without pooled storage,
// such as an Encoder's group prefix, must survive the switch: dropping it
// lost the outer groups of a WithAttrs after WithGroup).
func (s *state) growPrefix() {
	if s.prefixBuf == nil {
		s.prefixBuf = prefixPool.Get().(*[]byte)
		s.prefix = append((*s.prefixBuf)[:0], s.prefix...)
	}
}

func (s *state) free() {
	if p := s.prefixBuf; p != nil {
		if cap(s.prefix) <= 4<<10 { // keep only small buffers
			*p = s.prefix[:0]
			prefixPool.Put(p)
		}
		s.prefixBuf = nil
	}
	if gs := s.groups; gs != nil {
		clear(*gs)
		*gs = (*gs)[:0]
		groupPool.Put(gs)
		s.groups = nil
	}
}

// appendExtra writes the per-call top-level attributes, exactly as the
// record's own attributes would be written at the top level.
func (s *state) appendExtra(extra []slog.Attr) {
	for _, a := range extra {
		s.appendAttr(a, 0)
	}
}

func (s *state) attrSep() string {
	if s.c.json {
		return ","
	}
	return " "
}

// header writes the built-in attributes for JSON, Text and Logfmt.
func (s *state) header(r slog.Record) {
	c := s.c
	if c.preset != nil {
		s.presetHeader(r) // preset.go
		return
	}
	if c.json {
		s.buf = append(s.buf, '{')
	}
	rep := c.rep
	if !r.Time.IsZero() {
		if rep == nil {
			if c.format == Logfmt {
				s.appendKey("ts")
			} else {
				s.appendKey(slog.TimeKey)
			}
			s.appendTime(r.Time)
		} else {
			a := s.replace(slog.Time(slog.TimeKey, r.Time.Round(0)))
			if c.format == Logfmt && a.Key == slog.TimeKey {
				a.Key = "ts"
			}
			s.appendResolved(a, 0)
		}
	}
	if rep == nil {
		s.appendKey(slog.LevelKey)
		s.appendString(c.levelName(r.Level))
	} else {
		a := s.replace(slog.Any(slog.LevelKey, r.Level))
		if a.Value.Kind() == slog.KindAny {
			if l, ok := a.Value.Any().(slog.Level); ok {
				a.Value = slog.StringValue(c.levelName(l))
			}
		}
		s.appendResolved(a, 0)
	}
	if c.addSource {
		if rep == nil {
			if src := sourceFor(r.PC); src != nil {
				s.appendKey(slog.SourceKey)
				if c.json {
					s.appendJSONSource(src)
				} else {
					s.appendString(src.fileLine)
				}
			}
		} else {
			src := r.Source()
			if src == nil {
				src = &slog.Source{}
			}
			s.appendAttr(slog.Any(slog.SourceKey, src), 0)
		}
	}
	if rep == nil {
		s.appendKey(slog.MessageKey)
		s.appendString(r.Message)
	} else {
		s.appendAttr(slog.String(slog.MessageKey, r.Message), 0)
	}
}

// appendNonBuiltIns writes the pre-encoded state and the record's attrs,
// then closes the open JSON groups, exactly as slog does.
func (s *state) appendNonBuiltIns(r slog.Record) {
	e := s.e
	if pfa := e.pre; len(pfa) > 0 {
		s.buf = append(s.buf, s.sep...)
		s.buf = append(s.buf, pfa...)
		s.sep = s.attrSep()
		if s.c.json && pfa[len(pfa)-1] == '{' {
			s.sep = ""
		}
	}
	nOpenGroups := e.nOpenGroups
	if r.NumAttrs() > 0 {
		if len(e.groupPrefix) > 0 {
			s.growPrefix()
			s.prefix = append(s.prefix, e.groupPrefix...)
		}
		pos := len(s.buf)
		s.openGroups()
		nOpenGroups = len(e.groups)
		empty := true
		r.Attrs(func(a slog.Attr) bool {
			if s.appendAttr(a, 0) {
				empty = false
			}
			return true
		})
		if empty {
			s.buf = s.buf[:pos]
			nOpenGroups = e.nOpenGroups
		}
	}
	if s.c.json {
		for range e.groups[:nOpenGroups] {
			s.buf = append(s.buf, '}')
		}
		s.buf = append(s.buf, '}')
	}
}

func (s *state) openGroups() {
	for _, n := range s.e.groups[s.e.nOpenGroups:] {
		s.openGroup(n)
	}
}

func (s *state) openGroup(name string) {
	s.openGroupLen(name)
}

// openGroupLen opens group name and returns the number of bytes it added to
// the key prefix (text-like formats), for closeGroup.
func (s *state) openGroupLen(name string) int {
	n := 0
	if s.c.json {
		s.appendKey(name)
		s.buf = append(s.buf, '{')
		s.sep = ""
	} else {
		s.growPrefix()
		plen := len(s.prefix)
		if s.c.format == Logfmt {
			s.prefix = appendLogfmtKey(s.prefix, name)
		} else {
			s.prefix = append(s.prefix, name...)
		}
		s.prefix = append(s.prefix, '.')
		n = len(s.prefix) - plen
	}
	if s.groups != nil {
		*s.groups = append(*s.groups, name)
	}
	return n
}

// closeGroup ends a group whose name added n bytes to the key prefix.
func (s *state) closeGroup(n int) {
	if s.c.json {
		s.buf = append(s.buf, '}')
	}
	s.sep = s.attrSep()
	s.popGroup(n)
}

// popGroup removes the innermost group, whose name added n bytes to the
// key prefix, from the key prefix and the ReplaceAttr group path.
func (s *state) popGroup(n int) {
	s.prefix = s.prefix[:len(s.prefix)-n]
	if s.groups != nil {
		*s.groups = (*s.groups)[:len(*s.groups)-1]
	}
}

func (s *state) appendAttrs(as []slog.Attr, depth int) bool {
	nonEmpty := false
	for _, a := range as {
		if s.appendAttr(a, depth) {
			nonEmpty = true
		}
	}
	return nonEmpty
}

// replace resolves a and applies ReplaceAttr to it (never to groups).
func (s *state) replace(a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindLogValuer {
		a.Value = a.Value.Resolve()
	}
	if rep := s.c.rep; rep != nil && a.Value.Kind() != slog.KindGroup {
		var gs []string
		if s.groups != nil {
			gs = *s.groups
		}
		a = rep(gs, a)
		a.Value = a.Value.Resolve()
	}
	return a
}

// appendAttr appends a's key and value and reports whether anything was written.
func (s *state) appendAttr(a slog.Attr, depth int) bool {
	if ok, wrote := s.spend(a); !ok {
		return wrote
	}
	// Fast path: without ReplaceAttr, a scalar needs no resolution, cannot
	// be empty or a *slog.Source, and is written directly. Kind is a type
	// switch, so it is computed once here.
	if s.c.rep == nil {
		switch k := a.Value.Kind(); k {
		case slog.KindAny, slog.KindLogValuer, slog.KindGroup:
		default:
			s.appendKey(a.Key)
			s.appendScalar(a.Value, k)
			return true
		}
	}
	return s.appendResolved(s.replace(a), depth)
}

func isEmptyAttr(a slog.Attr) bool {
	return a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil
}

func (s *state) appendResolved(a slog.Attr, depth int) bool {
	if isEmptyAttr(a) {
		return false
	}
	if v := a.Value; v.Kind() == slog.KindAny {
		if src, ok := v.Any().(*slog.Source); ok {
			if src == nil || *src == (slog.Source{}) {
				return false
			}
			if s.c.json {
				a.Value = sourceGroup(src)
			} else {
				a.Value = slog.StringValue(fmt.Sprintf("%s:%d", src.File, src.Line))
			}
		}
	}
	if a.Value.Kind() != slog.KindGroup {
		s.appendKey(a.Key)
		s.appendValue(a.Value)
		return true
	}
	attrs := a.Value.Group()
	if len(attrs) == 0 {
		return true
	}
	if depth >= maxDepth {
		s.appendKey(a.Key)
		s.appendString(errDepth)
		return true
	}
	pos, sep, n := len(s.buf), s.sep, 0
	if a.Key != "" {
		n = s.openGroupLen(a.Key)
	}
	if !s.appendAttrs(attrs, depth+1) {
		// The group turned out empty: take it back whole. slog takes back
		// only the bytes, and keeps the group's separator (none: JSON then
		// lacks the ',' before the next key, golang/go#62152), key prefix
		// and ReplaceAttr group path for the attributes that follow; that
		// difference from slog is deliberate (see README).
		s.buf, s.sep = s.buf[:pos], sep
		if a.Key != "" {
			s.popGroup(n)
		}
		return false
	}
	if a.Key != "" {
		s.closeGroup(n)
	}
	return true
}
