package journald

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// recordTag opens every bus record this package's encoder writes; the
// datagram is the bytes after it. It tells the Sink its own records from
// foreign ones (the handler's drop marker, lines of a text handler), which
// no text format starts with a NUL.
const recordTag = 0

// encoder is the caller-side encoder: it writes a record as a recordTag
// and the journal's native-protocol entry. It is immutable once built.
type encoder struct {
	header    []byte                                       // SYSLOG_IDENTIFIER field, encoded once
	attrs     []byte                                       // fields added by WithAttrs, encoded
	prefix    []byte                                       // mapped names of the open groups, each followed by '_'
	groups    []string                                     // the open groups' names, for ReplaceAttr
	replace   func(groups []string, a slog.Attr) slog.Attr // Options.ReplaceAttr, or nil
	addSource bool                                         // write CODE_FILE, CODE_LINE, CODE_FUNC
	loggerKey string                                       // the attribute key of a Named handler's name
}

var _ asyncbus.Encoder = (*encoder)(nil)

// newEncoder returns the top-level encoder; an empty loggerKey means "logger".
func newEncoder(identifier string, addSource bool, loggerKey string, replace func([]string, slog.Attr) slog.Attr) *encoder {
	if loggerKey == "" {
		loggerKey = "logger"
	}
	return &encoder{
		header:    appendField(nil, "SYSLOG_IDENTIFIER", identifier),
		replace:   replace,
		addSource: addSource,
		loggerKey: loggerKey,
	}
}

// WithAttrs implements asyncbus.Encoder.
func (e *encoder) WithAttrs(attrs []slog.Attr) asyncbus.Encoder {
	e2 := *e
	buf := bytes.Clone(e.attrs)
	for _, a := range attrs {
		buf = e.appendAttr(buf, e.prefix, e.groups, a)
	}
	e2.attrs = buf
	return &e2
}

// WithGroup implements asyncbus.Encoder.
func (e *encoder) WithGroup(name string) asyncbus.Encoder {
	e2 := *e
	e2.prefix = appendGroupPrefix(e.prefix[:len(e.prefix):len(e.prefix)], name)
	e2.groups = append(e.groups[:len(e.groups):len(e.groups)], name)
	return &e2
}

// AppendRecord implements asyncbus.Encoder: PRIORITY, MESSAGE,
// SYSLOG_IDENTIFIER, the CODE_* fields with AddSource, the logger name,
// the Context hook's fields, then the attributes.
func (e *encoder) AppendRecord(dst []byte, _ context.Context, r slog.Record, name string, extra []slog.Attr) []byte {
	dst = append(dst, recordTag)
	dst = append(dst, "PRIORITY="...)
	dst = append(dst, priority(r.Level)+'0', '\n')
	dst = appendField(dst, "MESSAGE", r.Message)
	dst = append(dst, e.header...)
	if e.addSource {
		dst = append(dst, sourceFields(r.PC)...)
	}
	if name != "" {
		dst = e.appendAttr(dst, nil, nil, slog.String(e.loggerKey, name))
	}
	for _, a := range extra {
		dst = e.appendAttr(dst, nil, nil, a)
	}
	dst = append(dst, e.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		dst = e.appendAttr(dst, e.prefix, e.groups, a)
		return true
	})
	return dst
}

// priority maps a slog level to a syslog priority: below Info (Debug,
// Trace) 7 (debug), Info up to Warn 6 (info), Warn up to Error 4
// (warning), Error up to Fatal 3 (err), Fatal and above 2 (crit). 5
// (notice) is not used, nor 1 (alert) and 0 (emerg), which journald
// broadcasts to every terminal.
func priority(l slog.Level) byte {
	switch {
	case l < slog.LevelInfo:
		return 7
	case l < slog.LevelWarn:
		return 6
	case l < slog.LevelError:
		return 4
	case l < slog.LevelError+4: // asyncbus.LevelFatal
		return 3
	}
	return 2
}

// appendAttr appends a as fields named under prefix, following slog's
// handler rules: the value is resolved, an empty Attr is dropped, a
// group's members are fields of their own (an empty key inlines them, an
// empty group writes nothing). groups are the group names for ReplaceAttr,
// which is applied to every attribute that is not a group.
func (e *encoder) appendAttr(dst, prefix []byte, groups []string, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() != slog.KindGroup && e.replace != nil {
		a = e.replace(groups, a)
		a.Value = a.Value.Resolve()
	}
	if a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil {
		return dst // the empty Attr
	}
	if a.Value.Kind() == slog.KindGroup {
		inner, innerGroups := prefix, groups
		if a.Key != "" {
			// On the stack unless the names are long: the full name is
			// cut to 64 bytes, but leading underscores are removed first.
			var scratch [2 * maxFieldName]byte
			inner = appendGroupPrefix(append(scratch[:0], prefix...), a.Key)
			if e.replace != nil {
				innerGroups = append(groups[:len(groups):len(groups)], a.Key)
			}
		}
		for _, ga := range a.Value.Group() {
			dst = e.appendAttr(dst, inner, innerGroups, ga)
		}
		return dst
	}
	dst = appendFieldName(dst, prefix, a.Key)
	dst = append(dst, '=')
	mark := len(dst)
	dst = appendValue(dst, a.Value)
	return closeField(dst, mark)
}

// appendField appends the field name=value (name already valid).
func appendField(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, '=')
	mark := len(dst)
	dst = append(dst, value...)
	return closeField(dst, mark)
}

// closeField ends the field whose value, after the name and '=', starts at
// mark: with '\n' when the value has none, else
// in the protocol's binary form, the name, '\n', the value's length as a
// little-endian uint64, the value and '\n'.
func closeField(dst []byte, mark int) []byte {
	if bytes.IndexByte(dst[mark:], '\n') < 0 {
		return append(dst, '\n')
	}
	n := len(dst) - mark
	dst[mark-1] = '\n'                    // the '=' becomes the name's end
	dst = append(dst, make([]byte, 8)...) // no allocation: the compiler extends dst

	copy(dst[mark+8:], dst[mark:mark+n])
	binary.LittleEndian.PutUint64(dst[mark:], uint64(n))
	return append(dst, '\n')
}

// appendValue appends v's text (v resolved, not a group): strings and
// byte slices as they are (any bytes: the binary form carries them),
// numbers and booleans as strconv writes them, durations as
// time.Duration.String, times in RFC 3339 with nanoseconds, anything else
// as fmt's %+v (errors as their text; fmt recovers a panicking method).
func appendValue(dst []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return append(dst, v.String()...)
	case slog.KindInt64:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(dst, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(dst, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(dst, v.Bool())
	case slog.KindDuration:
		return append(dst, v.Duration().String()...)
	case slog.KindTime:
		return v.Time().AppendFormat(dst, time.RFC3339Nano)
	}
	switch x := v.Any().(type) {
	case []byte:
		return append(dst, x...)
	case nil:
		return append(dst, "<nil>"...)
	}
	return fmt.Appendf(dst, "%+v", v.Any())
}

// srcEntry holds the encoded CODE_* fields of one PC.
type srcEntry struct {
	pc     uintptr
	fields []byte // nil if unresolvable
}

// srcCache is a direct-mapped cache of resolved PCs. Each slot holds an
// immutable *srcEntry published with an atomic Store, so a reader sees
// either an old complete entry or a new complete one; a collision only
// costs a re-resolution (which allocates).
var srcCache [512]atomic.Pointer[srcEntry]

// sourceFields returns pc's CODE_FILE, CODE_LINE and CODE_FUNC fields
// (as sd_journal_send writes them), or nil.
func sourceFields(pc uintptr) []byte {
	if pc == 0 {
		return nil
	}
	slot := &srcCache[(pc>>2^pc>>12)%uintptr(len(srcCache))]
	if s := slot.Load(); s != nil && s.pc == pc {
		return s.fields
	}
	s := &srcEntry{pc: pc}
	if src := slog.NewRecord(time.Time{}, 0, "", pc).Source(); src != nil && src.File != "" {
		s.fields = appendField(s.fields, "CODE_FILE", src.File)
		s.fields = appendField(s.fields, "CODE_LINE", strconv.Itoa(src.Line))
		s.fields = appendField(s.fields, "CODE_FUNC", src.Function)
	}
	slot.Store(s)
	return s.fields
}
