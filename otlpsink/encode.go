package otlpsink

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
)

// Protobuf field numbers of the OTLP messages written here
// (opentelemetry/proto/logs/v1/logs.proto, common/v1/common.proto,
// collector/logs/v1/logs_service.proto).
const (
	fReqResourceLogs = 1 // ExportLogsServiceRequest.resource_logs

	fRLResource  = 1 // ResourceLogs.resource
	fRLScopeLogs = 2 // ResourceLogs.scope_logs

	fResAttributes = 1 // Resource.attributes

	fSLScope      = 1 // ScopeLogs.scope
	fSLLogRecords = 2 // ScopeLogs.log_records

	fScopeName    = 1 // InstrumentationScope.name
	fScopeVersion = 2 // InstrumentationScope.version

	fLRTime         = 1  // LogRecord.time_unix_nano (fixed64)
	fLRSeverity     = 2  // LogRecord.severity_number (enum)
	fLRSeverityText = 3  // LogRecord.severity_text
	fLRBody         = 5  // LogRecord.body (AnyValue)
	fLRAttributes   = 6  // LogRecord.attributes (KeyValue)
	fLRFlags        = 8  // LogRecord.flags (fixed32)
	fLRTraceID      = 9  // LogRecord.trace_id
	fLRSpanID       = 10 // LogRecord.span_id
	fLRObserved     = 11 // LogRecord.observed_time_unix_nano (fixed64)

	fKVKey   = 1 // KeyValue.key
	fKVValue = 2 // KeyValue.value

	fAVString = 1 // AnyValue.string_value
	fAVBool   = 2 // AnyValue.bool_value
	fAVInt    = 3 // AnyValue.int_value
	fAVDouble = 4 // AnyValue.double_value
	fAVArray  = 5 // AnyValue.array_value
	fAVKVList = 6 // AnyValue.kvlist_value
	fAVBytes  = 7 // AnyValue.bytes_value

	fListValues = 1 // ArrayValue.values and KeyValueList.values
)

// recordTag is the first byte of every bus record this encoder writes: the
// tag of ScopeLogs.log_records. The sink uses it to recognise foreign
// records (see frame).
const recordTag = byte(fSLLogRecords<<3 | protowire.BytesType)

// openLen starts a length-delimited field: it appends the tag and returns
// the position where the content starts. closeLen then inserts the
// length varint there, moving the content up (a memmove of the content,
// cheaper than encoding twice to learn the size first).
func openLen(dst []byte, num protowire.Number) ([]byte, int) {
	dst = appendTag(dst, num, protowire.BytesType)
	return dst, len(dst)
}

// appendTag is protowire.AppendTag for the field numbers used here (all
// below 16, so a tag is one byte).
func appendTag(dst []byte, num protowire.Number, typ protowire.Type) []byte {
	return append(dst, byte(num)<<3|byte(typ))
}

// appendVarint is protowire.AppendVarint with a fast path for the one-byte
// lengths and values that dominate log records.
func appendVarint(dst []byte, v uint64) []byte {
	if v < 0x80 {
		return append(dst, byte(v))
	}
	return protowire.AppendVarint(dst, v)
}

func closeLen(dst []byte, mark int) []byte {
	n := len(dst) - mark
	sz := protowire.SizeVarint(uint64(n))
	for range sz {
		dst = append(dst, 0)
	}
	copy(dst[mark+sz:], dst[mark:mark+n])
	if sz == 1 {
		dst[mark] = byte(n)
	} else {
		protowire.AppendVarint(dst[mark:mark], uint64(n))
	}
	return dst
}

// appendString appends s as the proto3 string field num. Protobuf strings
// must be valid UTF-8 (a decoder such as google.golang.org/protobuf
// refuses the whole request otherwise), so each byte of an invalid
// sequence is replaced with U+FFFD, as log/slog's JSONHandler does.
func appendString(dst []byte, num protowire.Number, s string) []byte {
	if !utf8.ValidString(s) {
		dst, m := openLen(dst, num)
		return closeLen(appendFixedUTF8(dst, s), m)
	}
	dst = appendTag(dst, num, protowire.BytesType)
	dst = appendVarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendFixedUTF8 appends s with each byte of an invalid UTF-8 sequence
// replaced by U+FFFD: ranging over a string yields utf8.RuneError, width
// 1, for each such byte, and every other rune re-encodes to its own bytes.
// (string(s) copies a []byte: only on this rare path.)
func appendFixedUTF8[T string | []byte](dst []byte, s T) []byte {
	for _, r := range string(s) {
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// appendBytesString is appendString for text held in a byte slice.
func appendBytesString(dst []byte, num protowire.Number, s []byte) []byte {
	if !utf8.Valid(s) {
		dst, m := openLen(dst, num)
		return closeLen(appendFixedUTF8(dst, s), m)
	}
	dst = appendTag(dst, num, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// level is one WithGroup level of an encoder's state: the group's name
// (empty for the top level), the KeyValue elements WithAttrs added at that
// level, already encoded, and the last error among those attributes (see
// recordErr).
type level struct {
	name  string
	attrs []byte
	re    recordErr
}

// encoder is the caller-side encoder: it writes a record as one element
// of ScopeLogs.log_records. It is immutable once built.
type encoder struct {
	levels    []level // levels[0] is the top level; never empty
	addSource bool    // write code.file.path, code.function.name, code.line.number
	loggerKey string  // the attribute key of a Named handler's name
}

// newEncoder returns the top-level encoder; an empty loggerKey means "logger".
func newEncoder(addSource bool, loggerKey string) *encoder {
	if loggerKey == "" {
		loggerKey = "logger"
	}
	return &encoder{levels: []level{{}}, addSource: addSource, loggerKey: loggerKey}
}

var _ asyncbus.Encoder = (*encoder)(nil)

// kvField is the field number of a KeyValue at depth: LogRecord.attributes
// at the top level, KeyValueList.values inside a group.
func kvField(depth int) protowire.Number {
	if depth == 0 {
		return fLRAttributes
	}
	return fListValues
}

// recordErr collects the error-valued attributes of a record at the
// handler's levels (top level, WithGroup levels, WithAttrs), which are
// written as the record's exception.* attributes: the last one wins, as
// otelslog's Record.SetErr. A nil *recordErr means "inside a group value":
// there an error is a string attribute under its key. hasMsg and hasType
// say that a LogRecord attribute of that key was written (see
// appendException).
type recordErr struct {
	err             error
	hasMsg, hasType bool
}

// noteKey notes a LogRecord attribute's key.
func (re *recordErr) noteKey(key string) {
	switch key {
	case exceptionMessage:
		re.hasMsg = true
	case exceptionType:
		re.hasType = true
	}
}

// WithAttrs implements asyncbus.Encoder.
func (e *encoder) WithAttrs(attrs []slog.Attr) asyncbus.Encoder {
	e2 := &encoder{levels: append([]level(nil), e.levels...), addSource: e.addSource, loggerKey: e.loggerKey}
	depth := len(e2.levels) - 1
	last := &e2.levels[depth]
	buf := append([]byte(nil), last.attrs...)
	re := last.re
	for _, a := range attrs {
		buf = appendAttr(buf, kvField(depth), a, depth+1, &re)
	}
	last.attrs, last.re = buf, re
	return e2
}

// WithGroup implements asyncbus.Encoder.
func (e *encoder) WithGroup(name string) asyncbus.Encoder {
	e2 := &encoder{levels: append(append([]level(nil), e.levels...), level{name: name}), addSource: e.addSource, loggerKey: e.loggerKey}
	return e2
}

// AppendRecord implements asyncbus.Encoder.
func (e *encoder) AppendRecord(dst []byte, ctx context.Context, r slog.Record, name string, extra []slog.Attr) []byte {
	dst, mark := openLen(dst, fSLLogRecords)
	if !r.Time.IsZero() {
		dst = appendTag(dst, fLRTime, protowire.Fixed64Type)
		dst = protowire.AppendFixed64(dst, uint64(r.Time.UnixNano()))
	}
	dst = appendTag(dst, fLRObserved, protowire.Fixed64Type)
	dst = protowire.AppendFixed64(dst, uint64(time.Now().UnixNano()))
	dst = appendTag(dst, fLRSeverity, protowire.VarintType)
	dst = appendVarint(dst, uint64(severity(r.Level)))
	dst, m := openLen(dst, fLRSeverityText)
	dst = appendLevelText(dst, r.Level)
	dst = closeLen(dst, m)
	dst, m = openLen(dst, fLRBody)
	dst = appendString(dst, fAVString, r.Message)
	dst = closeLen(dst, m)
	attrs := len(dst)
	var re recordErr
	if name != "" {
		dst = appendAttr(dst, fLRAttributes, slog.String(e.loggerKey, name), 1, nil)
		re.noteKey(e.loggerKey)
	}
	for _, a := range extra {
		dst = appendAttr(dst, fLRAttributes, a, 1, &re)
	}
	if e.addSource {
		dst = append(dst, sourceAttrs(r.PC)...)
	}
	dst = e.appendLevel(dst, 0, r, &re)
	dst = uniqueKeys(dst, attrs)
	if re.err != nil {
		dst = appendException(dst, &re)
	}
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			tid, sid := sc.TraceID(), sc.SpanID()
			dst = appendTag(dst, fLRFlags, protowire.Fixed32Type)
			dst = protowire.AppendFixed32(dst, uint32(sc.TraceFlags()))
			dst = appendTag(dst, fLRTraceID, protowire.BytesType)
			dst = protowire.AppendBytes(dst, tid[:])
			dst = appendTag(dst, fLRSpanID, protowire.BytesType)
			dst = protowire.AppendBytes(dst, sid[:])
		}
	}
	return closeLen(dst, mark)
}

// appendLevel writes level i's pre-encoded attributes, then the deeper
// levels (or, at the innermost, the record's attributes), wrapped in the
// group's KeyValue{key, AnyValue{kvlist_value}} unless i is 0, with each
// key once (uniqueKeys). A group that ends up empty is removed, as slog
// handlers must.
func (e *encoder) appendLevel(dst []byte, i int, r slog.Record, re *recordErr) []byte {
	start := len(dst)
	var mKV, mAV, mList int
	if i > 0 {
		dst, mKV = openLen(dst, kvField(i-1))
		dst = appendString(dst, fKVKey, e.levels[i].name)
		dst, mAV = openLen(dst, fKVValue)
		dst, mList = openLen(dst, fAVKVList)
	}
	content := len(dst)
	dst = append(dst, e.levels[i].attrs...)
	if lre := &e.levels[i].re; lre.err != nil {
		re.err = lre.err
	}
	if i == 0 {
		re.hasMsg, re.hasType = re.hasMsg || e.levels[0].re.hasMsg, re.hasType || e.levels[0].re.hasType
	}
	if i+1 < len(e.levels) {
		dst = e.appendLevel(dst, i+1, r, re)
	} else {
		num := kvField(i)
		r.Attrs(func(a slog.Attr) bool {
			dst = appendAttr(dst, num, a, i+1, re)
			return true
		})
	}
	if i == 0 {
		return dst
	}
	if len(dst) == content {
		return dst[:start]
	}
	dst = uniqueKeys(dst, content)
	dst = closeLen(dst, mList)
	dst = closeLen(dst, mAV)
	return closeLen(dst, mKV)
}

// appendAttr appends a as a KeyValue in field num, its value at collection
// depth depth (1 for a LogRecord attribute), following slog's handler
// rules: the value is resolved, a group with an empty key is inlined and
// an empty group is dropped. Keys are never empty: any other attribute
// with an empty key (slog's empty Attr among them) is dropped, as the OTel
// SDK drops it. With re, an error-valued attribute (slog.KindAny holding
// an error, before resolving, as otelslog tests it) is not written but
// kept in re, whatever its key; without re (inside a group value) it is a
// string attribute.
func appendAttr(dst []byte, num protowire.Number, a slog.Attr, depth int, re *recordErr) []byte {
	if re != nil && a.Value.Kind() == slog.KindAny {
		if err, ok := a.Value.Any().(error); ok {
			re.err = err
			return dst
		}
	}
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		g := a.Value.Group()
		if len(g) == 0 {
			return dst
		}
		if a.Key == "" {
			for _, ga := range g {
				dst = appendAttr(dst, num, ga, depth, re)
			}
			return dst
		}
	}
	if a.Key == "" {
		return dst
	}
	if num == fLRAttributes {
		if re != nil {
			re.noteKey(a.Key)
		}
		a.Key = unreserved(a.Key) // sequence.go
	}
	start := len(dst)
	dst, mKV := openLen(dst, num)
	dst = appendString(dst, fKVKey, a.Key)
	dst, mAV := openLen(dst, fKVValue)
	if a.Value.Kind() == slog.KindGroup {
		var ok bool
		if dst, ok = appendGroup(dst, a.Value.Group(), depth); !ok {
			return dst[:start] // every member was empty
		}
	} else {
		dst = appendValue(dst, a.Value, depth)
	}
	dst = closeLen(dst, mAV)
	return closeLen(dst, mKV)
}

// appendGroup appends the kvlist_value of a group value at collection
// depth depth, each key once, and reports false, with nothing appended,
// when no member was written (an empty group is dropped). Deeper than
// maxValueDepth the value is left empty, as the SDK cuts it.
func appendGroup(dst []byte, g []slog.Attr, depth int) ([]byte, bool) {
	if depth > maxValueDepth {
		return dst, true
	}
	dst, m := openLen(dst, fAVKVList)
	content := len(dst)
	for _, a := range g {
		dst = appendAttr(dst, fListValues, a, depth+1, nil)
	}
	if len(dst) == content {
		return dst[:m-1], false
	}
	return closeLen(uniqueKeys(dst, content), m), true
}

// severity maps a slog level to an OTLP SeverityNumber: level + 9, so
// DEBUG is 5, INFO 9, WARN 13, ERROR 17, clamped to 1 (TRACE) .. 24 (FATAL4).
func severity(l slog.Level) int {
	return int(min(max(l, -8), 15)) + 9 // clamp first: l+9 could overflow
}

// appendLevelText appends l.String() (INFO, WARN+2, DEBUG-4, ...) without
// allocating.
func appendLevelText(dst []byte, l slog.Level) []byte {
	base, off := "ERROR", l-slog.LevelError
	switch {
	case l < slog.LevelInfo:
		base, off = "DEBUG", l-slog.LevelDebug
	case l < slog.LevelWarn:
		base, off = "INFO", l-slog.LevelInfo
	case l < slog.LevelError:
		base, off = "WARN", l-slog.LevelWarn
	}
	dst = append(dst, base...)
	if off > 0 {
		dst = append(dst, '+')
	}
	if off != 0 {
		dst = strconv.AppendInt(dst, int64(off), 10)
	}
	return dst
}

// srcEntry holds the encoded source attributes of one PC.
type srcEntry struct {
	pc  uintptr
	kvs []byte // code.* KeyValues as LogRecord.attributes; nil if unresolvable
}

// srcCache is a direct-mapped cache of resolved PCs. Each slot holds an
// immutable *srcEntry published with an atomic Store, so a reader sees
// either an old complete entry or a new complete one; a collision only
// costs a re-resolution (which allocates).
var srcCache [1024]atomic.Pointer[srcEntry]

// sourceAttrs returns the encoded code.file.path, code.function.name and
// code.line.number attributes of pc (the OTel semantic conventions that
// otelslog's WithSource writes), or nil.
func sourceAttrs(pc uintptr) []byte {
	if pc == 0 {
		return nil
	}
	slot := &srcCache[(pc>>2^pc>>12)%uintptr(len(srcCache))]
	if e := slot.Load(); e != nil && e.pc == pc {
		return e.kvs
	}
	src := slog.NewRecord(time.Time{}, 0, "", pc).Source()
	e := &srcEntry{pc: pc}
	if src != nil && src.File != "" {
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.String("code.file.path", src.File), 1, nil)
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.String("code.function.name", src.Function), 1, nil)
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.Int("code.line.number", src.Line), 1, nil)
	}
	slot.Store(e)
	return e.kvs
}
