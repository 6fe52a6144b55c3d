package otlpsink

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus/internal/core"
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
// (empty for the top level) and the KeyValue elements WithAttrs added at
// that level, already encoded.
type level struct {
	name  string
	attrs []byte
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

var _ core.Encoder = (*encoder)(nil)

// kvField is the field number of a KeyValue at depth: LogRecord.attributes
// at the top level, KeyValueList.values inside a group.
func kvField(depth int) protowire.Number {
	if depth == 0 {
		return fLRAttributes
	}
	return fListValues
}

// WithAttrs implements core.Encoder.
func (e *encoder) WithAttrs(attrs []slog.Attr) core.Encoder {
	e2 := &encoder{levels: append([]level(nil), e.levels...), addSource: e.addSource, loggerKey: e.loggerKey}
	last := &e2.levels[len(e2.levels)-1]
	buf := append([]byte(nil), last.attrs...)
	for _, a := range attrs {
		buf = appendAttr(buf, kvField(len(e2.levels)-1), a)
	}
	last.attrs = buf
	return e2
}

// WithGroup implements core.Encoder.
func (e *encoder) WithGroup(name string) core.Encoder {
	e2 := &encoder{levels: append(append([]level(nil), e.levels...), level{name: name}), addSource: e.addSource, loggerKey: e.loggerKey}
	return e2
}

// AppendRecord implements core.Encoder.
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
	if name != "" {
		dst = appendAttr(dst, fLRAttributes, slog.String(e.loggerKey, name))
	}
	for _, a := range extra {
		dst = appendAttr(dst, fLRAttributes, a)
	}
	if e.addSource {
		dst = append(dst, sourceAttrs(r.PC)...)
	}
	dst = e.appendLevel(dst, 0, r)
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
// group's KeyValue{key, AnyValue{kvlist_value}} unless i is 0. A group
// that ends up empty is removed, as slog handlers must.
func (e *encoder) appendLevel(dst []byte, i int, r slog.Record) []byte {
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
	if i+1 < len(e.levels) {
		dst = e.appendLevel(dst, i+1, r)
	} else {
		num := kvField(i)
		r.Attrs(func(a slog.Attr) bool {
			dst = appendAttr(dst, num, a)
			return true
		})
	}
	if i == 0 {
		return dst
	}
	if len(dst) == content {
		return dst[:start]
	}
	dst = closeLen(dst, mList)
	dst = closeLen(dst, mAV)
	return closeLen(dst, mKV)
}

// appendAttr appends a as a KeyValue in field num, following slog's
// handler rules: the value is resolved, an empty Attr is dropped, a group
// with an empty key is inlined and an empty group is dropped.
func appendAttr(dst []byte, num protowire.Number, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil {
		return dst
	}
	if a.Value.Kind() == slog.KindGroup {
		g := a.Value.Group()
		if len(g) == 0 {
			return dst
		}
		if a.Key == "" {
			for _, ga := range g {
				dst = appendAttr(dst, num, ga)
			}
			return dst
		}
	}
	start := len(dst)
	dst, mKV := openLen(dst, num)
	dst = appendString(dst, fKVKey, a.Key)
	dst, mAV := openLen(dst, fKVValue)
	content := len(dst)
	dst = appendValue(dst, a.Value)
	if a.Value.Kind() == slog.KindGroup && len(dst) == content {
		return dst[:start] // every member was empty
	}
	dst = closeLen(dst, mAV)
	return closeLen(dst, mKV)
}

// appendValue appends the fields of an AnyValue for v (resolved), with the
// types otelslog gives them: times and durations as int64 nanoseconds,
// uint64 above MaxInt64 as a decimal string, errors as their text, byte
// slices as bytes, common slices as arrays, anything else as %+v.
func appendValue(dst []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(dst, fAVString, v.String())
	case slog.KindInt64:
		return appendInt(dst, v.Int64())
	case slog.KindUint64:
		u := v.Uint64()
		if u > math.MaxInt64 {
			dst, m := openLen(dst, fAVString)
			return closeLen(strconv.AppendUint(dst, u, 10), m)
		}
		return appendInt(dst, int64(u))
	case slog.KindFloat64:
		return appendDouble(dst, v.Float64())
	case slog.KindBool:
		return appendBool(dst, v.Bool())
	case slog.KindDuration:
		return appendInt(dst, v.Duration().Nanoseconds())
	case slog.KindTime:
		return appendInt(dst, v.Time().UnixNano())
	case slog.KindGroup:
		dst, m := openLen(dst, fAVKVList)
		content := len(dst)
		for _, a := range v.Group() {
			dst = appendAttr(dst, fListValues, a)
		}
		if len(dst) == content {
			return dst[:m-1] // empty: the caller drops the attribute
		}
		return closeLen(dst, m)
	}
	return appendAny(dst, v.Any())
}

func appendInt(dst []byte, i int64) []byte {
	dst = appendTag(dst, fAVInt, protowire.VarintType)
	return appendVarint(dst, uint64(i))
}

func appendDouble(dst []byte, f float64) []byte {
	dst = appendTag(dst, fAVDouble, protowire.Fixed64Type)
	return protowire.AppendFixed64(dst, math.Float64bits(f))
}

func appendBool(dst []byte, b bool) []byte {
	dst = appendTag(dst, fAVBool, protowire.VarintType)
	return appendVarint(dst, protowire.EncodeBool(b))
}

// appendAny encodes a KindAny value. Only the fallback (fmt) allocates.
func appendAny(dst []byte, x any) []byte {
	switch x := x.(type) {
	case nil:
		return dst // an AnyValue with no value: OTLP's empty value
	case error:
		return appendString(dst, fAVString, errorText(x))
	case []byte:
		dst = appendTag(dst, fAVBytes, protowire.BytesType)
		return protowire.AppendBytes(dst, x)
	case []string:
		return appendArray(dst, x, func(dst []byte, s string) []byte { return appendString(dst, fAVString, s) })
	case []int:
		return appendArray(dst, x, func(dst []byte, i int) []byte { return appendInt(dst, int64(i)) })
	case []int64:
		return appendArray(dst, x, appendInt)
	case []float64:
		return appendArray(dst, x, appendDouble)
	case []bool:
		return appendArray(dst, x, appendBool)
	case []any:
		return appendArray(dst, x, func(dst []byte, v any) []byte { return appendValue(dst, slog.AnyValue(v)) })
	}
	return appendString(dst, fAVString, fmt.Sprintf("%+v", x))
}

// errorText is err.Error() with a panic recovered as log/slog's handlers
// do: "<nil>" when err is a nil pointer (a typed nil *T whose Error
// dereferences its receiver), else "!PANIC: " and the panic value. The
// fmt fallback of appendAny needs no such guard: fmt recovers panics
// itself (and prints "<nil>" for a nil pointer receiver too).
func errorText(err error) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(err); v.Kind() == reflect.Pointer && v.IsNil() {
				s = "<nil>"
				return
			}
			s = fmt.Sprintf("!PANIC: %v", r)
		}
	}()
	return err.Error()
}

// appendArray writes AnyValue.array_value with one AnyValue per element.
func appendArray[T any](dst []byte, xs []T, elem func([]byte, T) []byte) []byte {
	dst, m := openLen(dst, fAVArray)
	for _, x := range xs {
		var mv int
		dst, mv = openLen(dst, fListValues)
		dst = elem(dst, x)
		dst = closeLen(dst, mv)
	}
	return closeLen(dst, m)
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
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.String("code.file.path", src.File))
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.String("code.function.name", src.Function))
		e.kvs = appendAttr(e.kvs, fLRAttributes, slog.Int("code.line.number", src.Line))
	}
	slot.Store(e)
	return e.kvs
}
