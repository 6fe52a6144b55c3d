package encode

// The Text and Logfmt formats: one fast path serves both (they differ in
// the time key, how strings are quoted and how logfmt sanitizes keys), plus
// the logfmt-only key and value writers.

import (
	"log/slog"
	"unicode"
	"unicode/utf8"
)

func (e *Encoder) appendText(b []byte, r *slog.Record, extra []slog.Attr) []byte {
	return e.appendKeyValues(b, r, extra, false)
}

// appendKeyValues is the Text and Logfmt fast path; they differ only in the
// time key, how strings are quoted and how keys are sanitized (logfmt).
func (e *Encoder) appendKeyValues(b []byte, r *slog.Record, extra []slog.Attr, logfmt bool) []byte {
	c := e.c
	bud := newBudget(len(b))
	valueString := appendTextValueString
	if logfmt {
		valueString = appendLogfmtValueString
	}
	if !r.Time.IsZero() {
		if logfmt {
			b = append(b, "ts="...)
		} else {
			b = append(b, "time="...)
		}
		b = appendRFC3339Millis(b, r.Time)
		b = append(b, ' ')
	}
	if l := r.Level; l >= levelTabMin && l <= levelTabMax {
		b = append(b, c.levelTok[l-levelTabMin]...)
	} else {
		b = append(b, "level="...)
		b = valueString(b, c.levelName(l))
	}
	if c.addSource {
		if src := sourceFor(r.PC); src != nil {
			b = e.appendSource(b, src, " ")
		}
	}
	b = append(b, " msg="...)
	b = valueString(b, r.Message)
	if len(e.named) > 0 {
		b = append(b, ' ')
		b = append(b, e.named...)
	}
	for _, a := range extra {
		if bud.truncated {
			break
		}
		if nb, ok := appendKVAttr(b, a, "", true, logfmt); ok && bud.fits(len(b)) {
			b = nb
			bud.take()
		} else {
			b, _, _ = e.slowAttr(b, a, " ", "", &bud)
		}
	}
	if pre := e.pre; len(pre) > 0 {
		b = append(b, ' ')
		b = append(b, pre...)
	}
	// Not asked for up front with r.NumAttrs, which copies the whole Record.
	st := textAttrsState{prefix: e.recGroups, plain: e.recPrefixPlain, logfmt: logfmt}
	if front, back, ok := recordAttrs(r); ok {
		b = e.appendTextAttrs(b, front, &st, &bud)
		b = e.appendTextAttrs(b, back, &st, &bud)
	} else {
		r.Attrs(func(a slog.Attr) bool {
			b = e.appendTextRecordAttr(b, a, &st, &bud)
			return !bud.truncated
		})
	}
	st.s.free()
	return append(b, '\n')
}

// textAttrsState is appendText's state across a record's attributes.
type textAttrsState struct {
	prefix string // the record's group prefix
	plain  bool   // prefix needs no quoting
	logfmt bool
	s      state // the general code's state, once an attribute needed it
}

// appendTextAttrs appends the record attributes as, stopping once the
// budget is spent (the rest is left out, as in the general code).
func (e *Encoder) appendTextAttrs(b []byte, as []slog.Attr, st *textAttrsState, bud *budget) []byte {
	for i := range as {
		if bud.truncated {
			break
		}
		b = e.appendTextRecordAttr(b, as[i], st, bud)
	}
	return b
}

// appendTextRecordAttr appends one record attribute: a scalar directly,
// anything else through the general code.
// The budget is a parameter, not a field of st: the general code's state
// st.s leaks its contents, and a pointer in st would move bud to the heap.
func (e *Encoder) appendTextRecordAttr(b []byte, a slog.Attr, st *textAttrsState, bud *budget) []byte {
	if bud.fits(len(b)) {
		if nb, ok := appendKVAttr(b, a, st.prefix, st.plain, st.logfmt); ok {
			bud.take()
			return nb
		}
	}
	return e.generalAttr(&st.s, b, a, st.prefix, bud)
}

// appendKVAttr is appendLogfmtAttr or appendTextAttr.
func appendKVAttr(b []byte, a slog.Attr, prefix string, plain, logfmt bool) ([]byte, bool) {
	if logfmt {
		return appendLogfmtAttr(b, a, prefix)
	}
	return appendTextAttr(b, a, prefix, plain)
}

// appendTextAttr appends " key=value" for a scalar attribute and reports
// true, or reports false, having written nothing, for the kinds that need
// the general code. prefix is the dotted group prefix; plain reports that
// it needs no quoting.
func appendTextAttr(b []byte, a slog.Attr, prefix string, plain bool) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if !isScalar(k) {
		return b, false
	}
	b = append(b, ' ')
	if plain && len(a.Key) > 0 && textClean(a.Key) {
		if len(prefix) > 0 {
			b = append(b, prefix...)
		}
		b = append(b, a.Key...)
	} else {
		b = appendTextKey(b, prefix, a.Key)
	}
	b = append(b, '=')
	return appendTextScalar(b, v, k, false), true
}

func (e *Encoder) appendLogfmt(b []byte, r *slog.Record, extra []slog.Attr) []byte {
	return e.appendKeyValues(b, r, extra, true)
}

// appendLogfmtAttr is appendTextAttr for logfmt (prefix is already sanitized).
func appendLogfmtAttr(b []byte, a slog.Attr, prefix string) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if !isScalar(k) {
		return b, false
	}
	b = append(b, ' ')
	if len(prefix) > 0 {
		b = append(b, prefix...)
	}
	switch {
	case len(a.Key) > 0 && logfmtKeyClean(a.Key):
		b = append(b, a.Key...)
	case len(a.Key) == 0 && len(prefix) == 0:
		b = append(b, '_')
	default:
		b = appendLogfmtKey(b, a.Key)
	}
	b = append(b, '=')
	return appendTextScalar(b, v, k, true), true
}

// appendLogfmtValueString appends s bare, or quoted with JSON escaping when
// slog's TextHandler would quote it; invalid UTF-8 is the escape \ufffd
// whatever slog's JSON escaping of the Go release writes.
func appendLogfmtValueString(b []byte, s string) []byte {
	if len(s) > 0 && textClean(s) {
		return append(b, s...)
	}
	if jsonClean(s) {
		// Not textClean but needs no JSON escaping: it is empty or has a
		// space or '=', so it is quoted, and escaping adds nothing.
		return appendQuoted(b, s)
	}
	if needsQuoting(s) {
		b = append(b, '"')
		b = appendEscapedJSONAs(b, s, `\ufffd`, false)
		return append(b, '"')
	}
	return append(b, s...)
}

// appendLogfmtKey appends key sanitized for logfmt (see the package doc).
func appendLogfmtKey(b []byte, key string) []byte {
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				c = '_'
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(key[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			b = append(b, '_')
		} else {
			b = append(b, key[i:i+size]...)
		}
		i += size
	}
	return b
}
