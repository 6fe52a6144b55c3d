package encode

import (
	"log/slog"
	"math"
	"time"
)

// The fast path. Without ReplaceAttr (the common case) the JSON, Text and
// Logfmt formats are written by one specialised function each: the built-in
// keys and the level are pre-encoded constants, the group structure of a
// derived Encoder is pre-encoded once (see prepare), and every scalar
// attribute is appended straight to a local buffer with its Kind computed
// once, with no per-attribute format switch and no state struct. Keys and
// values go through the same primitives (escaping, quoting, numbers, times)
// as the general code in state.go, so the two paths agree by construction;
// attributes that need resolution or recursion (KindAny, KindLogValuer,
// KindGroup) are handed to the general code itself. fast_test.go compares
// both paths with each other and with log/slog.

// fastPath selects the specialised Append implementation of an Encoder.
type fastPath uint8

const (
	fastNone fastPath = iota // ReplaceAttr set, or the Console format
	fastJSON
	fastText
	fastLogfmt
)

// prepare computes the fast-path state of a freshly built or derived
// Encoder from its groups. It runs once per New/With*/Named, never per record.
func (e *Encoder) prepare() {
	c := e.c
	e.fast = fastNone
	if c.format.isZap() {
		e.prepareZap() // zap.go
		return
	}
	if c.rep != nil {
		return
	}
	var p []byte
	switch c.format {
	case JSON:
		e.fast = fastJSON
		for _, n := range e.groups[e.nOpenGroups:] {
			p = append(p, '"')
			p = appendEscapedJSON(p, n)
			p = append(p, '"', ':', '{')
		}
	case Text:
		e.fast = fastText
		p = append(p, e.groupPrefix...)
		for _, n := range e.groups[e.nOpenGroups:] {
			p = append(p, n...)
			p = append(p, '.')
		}
	case Logfmt:
		e.fast = fastLogfmt
		p = append(p, e.groupPrefix...)
		for _, n := range e.groups[e.nOpenGroups:] {
			p = appendLogfmtKey(p, n)
			p = append(p, '.')
		}
	default:
		return
	}
	e.recGroups = string(p)
	e.recPrefixPlain = len(p) == 0 || !needsQuoting(e.recGroups)
}

// prepareConfig pre-encodes the "level" field of every tabled level for the
// fast path, through the general code so that the bytes are the same.
func (e *Encoder) prepareConfig() {
	c := e.c
	if c.rep != nil || c.format == Console || c.format.isZap() {
		return
	}
	for i := range c.levelTok {
		s := newState(e, nil, "")
		s.appendKey(slog.LevelKey)
		s.appendString(c.levelName(slog.Level(i + levelTabMin)))
		c.levelTok[i] = string(s.buf)
		s.free()
	}
}

// slowAttr writes a with the general code: sep is the pending separator and
// prefix the text-like key prefix. It returns the separator due next and
// whether anything was written.
func (e *Encoder) slowAttr(b []byte, a slog.Attr, sep, prefix string) ([]byte, string, bool) {
	s := state{e: e, c: e.c, buf: b, sep: sep}
	if len(prefix) > 0 {
		s.growPrefix()
		s.prefix = append(s.prefix, prefix...)
	}
	ok := s.appendAttr(a, 0)
	b, sep = s.buf, s.sep
	s.free()
	return b, sep, ok
}

// generalAttr writes one of a record's attrs with the general code, for the
// text-like formats. s is kept across the record's attrs (created here on
// first use): like slog, the general code leaves a group that turned out
// empty in the key prefix of the attrs that follow it, so once s's prefix
// differs from the fast path's prefix it reports general, and every later
// attr of the record must go through s as well.
func (e *Encoder) generalAttr(s *state, b []byte, a slog.Attr, prefix string) ([]byte, bool) {
	if s.e == nil {
		*s = state{e: e, c: e.c, sep: " "}
		if len(prefix) > 0 {
			s.growPrefix()
			s.prefix = append(s.prefix, prefix...)
		}
	}
	s.buf = b
	s.appendAttr(a, 0)
	return s.buf, len(s.prefix) != len(prefix)
}

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

// ---- JSON ----

func (e *Encoder) appendJSON(b []byte, r *slog.Record, extra []slog.Attr) []byte {
	c := e.c
	b = append(b, '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":`...)
		b = appendJSONTime(b, r.Time)
		b = append(b, ',')
	}
	if l := r.Level; l >= levelTabMin && l <= levelTabMax {
		b = append(b, c.levelTok[l-levelTabMin]...)
	} else {
		b = append(b, `"level":`...)
		b = appendJSONString(b, c.levelName(l))
	}
	if c.addSource {
		if src := sourceFor(r.PC); src != nil {
			b = e.appendSource(b, src, ",")
		}
	}
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, r.Message)
	if len(e.named) > 0 {
		b = append(b, ',')
		b = append(b, e.named...)
	}
	for _, a := range extra {
		// Each extra attr starts from a "," separator; one that writes
		// nothing leaves none behind (see state.appendExtra).
		if nb, ok := appendJSONAttr(b, a, true); ok {
			b = nb
		} else {
			b, _, _ = e.slowAttr(b, a, ",", "")
		}
	}
	comma := true
	if pre := e.pre; len(pre) > 0 {
		b = append(b, ',')
		b = append(b, pre...)
		comma = pre[len(pre)-1] != '{'
	}
	closeN := e.nOpenGroups
	if r.NumAttrs() > 0 {
		pos := len(b)
		if len(e.recGroups) > 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, e.recGroups...)
			comma = false
		}
		closeN = len(e.groups)
		wrote := false
		r.Attrs(func(a slog.Attr) bool {
			if k := a.Value.Kind(); isScalar(k) {
				b = appendJSONKey(b, a.Key, comma)
				b = appendJSONScalar(b, a.Value, k)
				comma, wrote = true, true
				return true
			}
			sep := ""
			if comma {
				sep = ","
			}
			var ok bool
			b, sep, ok = e.slowAttr(b, a, sep, "")
			comma = sep != ""
			wrote = wrote || ok
			return true
		})
		if !wrote {
			b = b[:pos]
			closeN = e.nOpenGroups
		}
	}
	for range closeN {
		b = append(b, '}')
	}
	return append(b, '}', '\n')
}

// isScalar reports whether k is written directly, without resolution or
// recursion: every kind but KindAny, KindGroup and KindLogValuer.
func isScalar(k slog.Kind) bool {
	return k != slog.KindAny && k != slog.KindGroup && k != slog.KindLogValuer
}

// appendJSONAttr appends a scalar attribute (preceded by ',' if comma) and
// reports true, or reports false, having written nothing, for the kinds
// that need the general code.
func appendJSONAttr(b []byte, a slog.Attr, comma bool) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if !isScalar(k) {
		return b, false
	}
	b = appendJSONKey(b, a.Key, comma)
	return appendJSONScalar(b, v, k), true
}

// appendJSONScalar appends a scalar value (not KindAny, KindLogValuer or
// KindGroup) the way slog's JSONHandler does.
func appendJSONScalar(b []byte, v slog.Value, k slog.Kind) []byte {
	switch k {
	case slog.KindString:
		return appendJSONString(b, v.String())
	case slog.KindInt64:
		return appendInt(b, v.Int64())
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, v.Bool())
	case slog.KindDuration:
		return appendInt(b, int64(v.Duration()))
	case slog.KindTime:
		return appendJSONTime(b, v.Time())
	default: // slog.KindFloat64
		return appendJSONFloatValue(b, v.Float64())
	}
}

func appendJSONFloatValue(b []byte, f float64) []byte {
	switch {
	case f != f:
		return append(b, `"!ERROR:json: unsupported value: NaN"`...)
	case f > math.MaxFloat64:
		return append(b, `"!ERROR:json: unsupported value: +Inf"`...)
	case f < -math.MaxFloat64:
		return append(b, `"!ERROR:json: unsupported value: -Inf"`...)
	}
	return appendJSONFloat(b, f)
}

// appendJSONTime appends t quoted, in RFC 3339 with nanoseconds, as slog's
// JSON handler does (including its error text, followed by the time, for
// years outside [0,9999]).
func appendJSONTime(b []byte, t time.Time) []byte {
	c, ok := stamp(t)
	if !ok {
		b = append(b, `"`+errYear+`""`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	b = append(b, '"')
	b = append(b, c.date[:]...)
	b = appendNanos(b, t.Nanosecond())
	b = append(b, c.zone[:c.zlen]...)
	return append(b, '"')
}

// appendJSONString appends s as a quoted JSON string, escaped as slog does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	if jsonClean(s) {
		b = append(b, s...)
	} else {
		b = appendEscapedJSON(b, s)
	}
	return append(b, '"')
}

// appendQuoted appends s between double quotes, unescaped.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONKey appends ,"key": (without the comma unless comma).
func appendJSONKey(b []byte, key string, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = append(b, '"')
	if jsonClean(key) {
		b = append(b, key...)
	} else {
		b = appendEscapedJSON(b, key)
	}
	return append(b, '"', ':')
}

// ---- Text ----

func (e *Encoder) appendText(b []byte, r *slog.Record, extra []slog.Attr) []byte {
	return e.appendKeyValues(b, r, extra, false)
}

// appendKeyValues is the Text and Logfmt fast path; they differ only in the
// time key, how strings are quoted and how keys are sanitized (logfmt).
func (e *Encoder) appendKeyValues(b []byte, r *slog.Record, extra []slog.Attr, logfmt bool) []byte {
	c := e.c
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
		if nb, ok := appendKVAttr(b, a, "", true, logfmt); ok {
			b = nb
		} else {
			b, _, _ = e.slowAttr(b, a, " ", "")
		}
	}
	if pre := e.pre; len(pre) > 0 {
		b = append(b, ' ')
		b = append(b, pre...)
	}
	if r.NumAttrs() > 0 {
		prefix, plain := e.recGroups, e.recPrefixPlain
		var s state // the general code's state, once an attr needed it
		general := false
		r.Attrs(func(a slog.Attr) bool {
			if !general {
				if nb, ok := appendKVAttr(b, a, prefix, plain, logfmt); ok {
					b = nb
					return true
				}
			}
			b, general = e.generalAttr(&s, b, a, prefix)
			return true
		})
		s.free()
	}
	return append(b, '\n')
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

// appendTextScalar appends a scalar value the way slog's TextHandler does
// (logfmt: with JSON escaping inside the quotes).
func appendTextScalar(b []byte, v slog.Value, k slog.Kind, logfmt bool) []byte {
	switch k {
	case slog.KindString:
		if logfmt {
			return appendLogfmtValueString(b, v.String())
		}
		return appendTextValueString(b, v.String())
	case slog.KindInt64:
		return appendInt(b, v.Int64())
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, v.Bool())
	case slog.KindDuration:
		return appendDuration(b, v.Duration())
	case slog.KindTime:
		return appendRFC3339Millis(b, v.Time())
	default: // slog.KindFloat64
		return appendTextFloat(b, v.Float64())
	}
}

// appendTextValueString appends s, quoted only if slog's TextHandler would.
func appendTextValueString(b []byte, s string) []byte {
	if len(s) > 0 && textClean(s) {
		return append(b, s...)
	}
	if quoteClean(s) {
		// Printable ASCII without '"' or '\\' that is not textClean: it is
		// empty or has a space or '=', so slog quotes it, and
		// strconv.Quote adds nothing but the quotes.
		return appendQuoted(b, s)
	}
	if needsQuoting(s) {
		return appendTextQuote(b, s)
	}
	return append(b, s...)
}

// ---- Logfmt ----

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
// slog's TextHandler would quote it.
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
		b = appendEscapedJSON(b, s)
		return append(b, '"')
	}
	return append(b, s...)
}
