// Values: an attribute's value as an OTLP AnyValue, converted as otelslog
// converts it (go.opentelemetry.io/contrib/bridges/otelslog, convert.go).

package otlpsink

import (
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

const (
	// maxValueDepth is the deepest collection (group, map, slice) written:
	// one nested deeper is an empty value, as the OTel SDK's default
	// AttributeValueDepthLimit (64) cuts it. A LogRecord attribute's value
	// is at depth 1.
	maxValueDepth = 64
	// maxConvertDepth bounds how deep a reflected value is followed
	// (otelslog's maxConvertDepth): a value that goes deeper, such as a
	// cycle, is written whole as maxDepthExceeded.
	maxConvertDepth  = 100
	maxDepthExceeded = "<max-depth-exceeded>"
)

// appendValue appends the fields of an AnyValue for v (resolved, not a
// group) at collection depth depth: times and durations as int64
// nanoseconds, uint64 above MaxInt64 as a decimal string, any other value
// as appendAny.
func appendValue(dst []byte, v slog.Value, depth int) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(dst, fAVString, v.String())
	case slog.KindInt64:
		return appendInt(dst, v.Int64())
	case slog.KindUint64:
		return appendUint(dst, v.Uint64())
	case slog.KindFloat64:
		return appendDouble(dst, v.Float64())
	case slog.KindBool:
		return appendBool(dst, v.Bool())
	case slog.KindDuration:
		return appendInt(dst, v.Duration().Nanoseconds())
	case slog.KindTime:
		return appendInt(dst, v.Time().UnixNano())
	}
	return appendAny(dst, v.Any(), depth)
}

func appendInt(dst []byte, i int64) []byte {
	dst = appendTag(dst, fAVInt, protowire.VarintType)
	return appendVarint(dst, uint64(i))
}

// appendUint writes u as an int, or above MaxInt64 as its decimal text.
func appendUint(dst []byte, u uint64) []byte {
	if u > math.MaxInt64 {
		dst, m := openLen(dst, fAVString)
		return closeLen(strconv.AppendUint(dst, u, 10), m)
	}
	return appendInt(dst, int64(u))
}

func appendDouble(dst []byte, f float64) []byte {
	dst = appendTag(dst, fAVDouble, protowire.Fixed64Type)
	return protowire.AppendFixed64(dst, math.Float64bits(f))
}

func appendBool(dst []byte, b bool) []byte {
	dst = appendTag(dst, fAVBool, protowire.VarintType)
	return appendVarint(dst, protowire.EncodeBool(b))
}

// appendAny encodes a slog.KindAny value at collection depth depth as
// otelslog converts it. The common slices are written without reflection;
// maps, other slices and arrays, and pointers are followed by reflection,
// at most maxConvertDepth deep (else the whole value is maxDepthExceeded).
func appendAny(dst []byte, x any, depth int) []byte {
	switch x := x.(type) {
	case []string:
		return appendArray(dst, x, depth, func(dst []byte, s string) []byte { return appendString(dst, fAVString, s) })
	case []int:
		return appendArray(dst, x, depth, func(dst []byte, i int) []byte { return appendInt(dst, int64(i)) })
	case []int64:
		return appendArray(dst, x, depth, appendInt)
	case []float64:
		return appendArray(dst, x, depth, appendDouble)
	case []bool:
		return appendArray(dst, x, depth, appendBool)
	}
	start := len(dst)
	dst, ok := appendGo(dst, x, depth, maxConvertDepth)
	if !ok {
		return appendString(dst[:start], fAVString, maxDepthExceeded)
	}
	return dst
}

// appendArray writes AnyValue.array_value with one AnyValue per element
// (nothing deeper than maxValueDepth).
func appendArray[T any](dst []byte, xs []T, depth int, elem func([]byte, T) []byte) []byte {
	if depth > maxValueDepth {
		return dst
	}
	dst, m := openLen(dst, fAVArray)
	for _, x := range xs {
		var mv int
		dst, mv = openLen(dst, fListValues)
		dst = elem(dst, x)
		dst = closeLen(dst, mv)
	}
	return closeLen(dst, m)
}

// appendGo appends x as otelslog's convertValueDepth converts it, with
// remaining levels of reflection left; it reports false when x goes
// deeper than that.
func appendGo(dst []byte, x any, depth, remaining int) ([]byte, bool) {
	switch x := x.(type) {
	case nil:
		return dst, true // an AnyValue with no value: OTLP's empty value
	case bool:
		return appendBool(dst, x), true
	case string:
		return appendString(dst, fAVString, x), true
	case int:
		return appendInt(dst, int64(x)), true
	case int8:
		return appendInt(dst, int64(x)), true
	case int16:
		return appendInt(dst, int64(x)), true
	case int32:
		return appendInt(dst, int64(x)), true
	case int64:
		return appendInt(dst, x), true
	case uint:
		return appendUint(dst, uint64(x)), true
	case uint8:
		return appendInt(dst, int64(x)), true
	case uint16:
		return appendInt(dst, int64(x)), true
	case uint32:
		return appendInt(dst, int64(x)), true
	case uint64:
		return appendUint(dst, x), true
	case uintptr:
		return appendUint(dst, uint64(x)), true
	case float32:
		return appendDouble(dst, float64(x)), true
	case float64:
		return appendDouble(dst, x), true
	case time.Duration:
		return appendInt(dst, x.Nanoseconds()), true
	case complex64:
		return appendComplex(dst, complex128(x), depth), true
	case complex128:
		return appendComplex(dst, x, depth), true
	case time.Time:
		return appendInt(dst, x.UnixNano()), true
	case []byte:
		if depth > maxValueDepth {
			return dst, true
		}
		dst = appendTag(dst, fAVBytes, protowire.BytesType)
		return protowire.AppendBytes(dst, x), true
	case error:
		return appendString(dst, fAVString, errorText(x)), true
	case attribute.Value:
		return appendAttrValue(dst, x, depth), true
	}
	return appendReflected(dst, reflect.ValueOf(x), depth, remaining)
}

// appendReflected is appendGo for the values its type switch leaves:
// structs as %+v, slices and arrays as arrays, maps as kvlists (keys as
// strings: a string kind as is, others as %+v), pointers followed, and
// anything else as "unhandled: (type) %+v".
func appendReflected(dst []byte, v reflect.Value, depth, remaining int) ([]byte, bool) {
	switch v.Kind() {
	case reflect.Struct:
		return appendFormatted(dst, "%+v", v.Interface()), true
	case reflect.Slice, reflect.Array:
		n := v.Len()
		if n > 0 && remaining == 0 {
			return dst, false
		}
		if depth > maxValueDepth { // cut, but a cycle still makes it maxDepthExceeded
			return dst, fitsDepth(v, remaining)
		}
		dst, m := openLen(dst, fAVArray)
		for i := range n {
			var mv int
			var ok bool
			dst, mv = openLen(dst, fListValues)
			if dst, ok = appendElem(dst, v.Index(i), depth+1, remaining-1); !ok {
				return dst, false
			}
			dst = closeLen(dst, mv)
		}
		return closeLen(dst, m), true
	case reflect.Map:
		if v.Len() > 0 && remaining == 0 {
			return dst, false
		}
		if depth > maxValueDepth {
			return dst, fitsDepth(v, remaining)
		}
		dst, m := openLen(dst, fAVKVList)
		content := len(dst)
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			start := len(dst)
			var mKV, mAV int
			var ok bool
			dst, mKV = openLen(dst, fListValues)
			var keyLen int
			if k.Kind() == reflect.String {
				keyLen = len(k.String())
				dst = appendString(dst, fKVKey, k.String())
			} else {
				var mk int
				dst, mk = openLen(dst, fKVKey)
				dst = fixUTF8(fmt.Appendf(dst, "%+v", k.Interface()), mk)
				keyLen = len(dst) - mk
				dst = closeLen(dst, mk)
			}
			dst, mAV = openLen(dst, fKVValue)
			if dst, ok = appendElem(dst, it.Value(), depth+1, remaining-1); !ok {
				return dst, false
			}
			dst = closeLen(dst, mAV)
			dst = closeLen(dst, mKV)
			if keyLen == 0 {
				dst = dst[:start] // keys are never empty
			}
		}
		if v.Type().Key().Kind() != reflect.String {
			dst = uniqueKeys(dst, content) // keys written as %+v may repeat
		}
		return closeLen(dst, m), true
	case reflect.Pointer:
		if v.IsNil() {
			return dst, true
		}
		if remaining == 0 {
			return dst, false
		}
		return appendElem(dst, v.Elem(), depth, remaining-1)
	}
	return appendFormatted(dst, "unhandled: (%s) %+v", v.Type(), v.Interface()), true
}

// appendElem is appendGo for an element of a reflected value: an
// interface is unwrapped, a nil one is the empty value.
func appendElem(dst []byte, v reflect.Value, depth, remaining int) ([]byte, bool) {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return dst, true
		}
		v = v.Elem()
	}
	return appendGo(dst, v.Interface(), depth, remaining)
}

// fitsDepth reports whether otelslog converts v within remaining levels
// of reflection (the check appendReflected makes, for a value it cuts).
func fitsDepth(v reflect.Value, remaining int) bool {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	if v.CanInterface() {
		switch v.Interface().(type) {
		case []byte, error, attribute.Value:
			return true
		}
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return true
		}
		if remaining == 0 {
			return false
		}
		for i := range v.Len() {
			if !fitsDepth(v.Index(i), remaining-1) {
				return false
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return true
		}
		if remaining == 0 {
			return false
		}
		for it := v.MapRange(); it.Next(); {
			if !fitsDepth(it.Value(), remaining-1) {
				return false
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		return remaining > 0 && fitsDepth(v.Elem(), remaining-1)
	}
	return true
}

// appendComplex writes c as otelslog does: a kvlist {r, i} of doubles.
func appendComplex(dst []byte, c complex128, depth int) []byte {
	if depth > maxValueDepth {
		return dst
	}
	dst, m := openLen(dst, fAVKVList)
	for _, p := range [2]struct {
		k string
		f float64
	}{{"r", real(c)}, {"i", imag(c)}} {
		var mKV, mAV int
		dst, mKV = openLen(dst, fListValues)
		dst = appendString(dst, fKVKey, p.k)
		dst, mAV = openLen(dst, fKVValue)
		dst = closeLen(appendDouble(dst, p.f), mAV)
		dst = closeLen(dst, mKV)
	}
	return closeLen(dst, m)
}

// appendAttrValue writes an attribute.Value, which otelslog passes on as
// it is, as the SDK's exporter writes it.
func appendAttrValue(dst []byte, v attribute.Value, depth int) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return appendBool(dst, v.AsBool())
	case attribute.INT64:
		return appendInt(dst, v.AsInt64())
	case attribute.FLOAT64:
		return appendDouble(dst, v.AsFloat64())
	case attribute.STRING:
		return appendString(dst, fAVString, v.AsString())
	case attribute.BOOLSLICE:
		return appendArray(dst, v.AsBoolSlice(), depth, appendBool)
	case attribute.INT64SLICE:
		return appendArray(dst, v.AsInt64Slice(), depth, appendInt)
	case attribute.FLOAT64SLICE:
		return appendArray(dst, v.AsFloat64Slice(), depth, appendDouble)
	case attribute.STRINGSLICE:
		return appendArray(dst, v.AsStringSlice(), depth, func(dst []byte, s string) []byte { return appendString(dst, fAVString, s) })
	case attribute.BYTESLICE:
		if depth > maxValueDepth {
			return dst
		}
		dst = appendTag(dst, fAVBytes, protowire.BytesType)
		return protowire.AppendBytes(dst, v.AsByteSlice())
	case attribute.SLICE:
		return appendArray(dst, v.AsSlice(), depth, func(dst []byte, e attribute.Value) []byte {
			return appendAttrValue(dst, e, depth+1)
		})
	case attribute.MAP:
		if depth > maxValueDepth {
			return dst
		}
		dst, m := openLen(dst, fAVKVList)
		content := len(dst)
		for _, kv := range v.AsMap() {
			if kv.Key == "" {
				continue // keys are never empty
			}
			var mKV, mAV int
			dst, mKV = openLen(dst, fListValues)
			dst = appendString(dst, fKVKey, string(kv.Key))
			dst, mAV = openLen(dst, fKVValue)
			dst = closeLen(appendAttrValue(dst, kv.Value, depth+1), mAV)
			dst = closeLen(dst, mKV)
		}
		return closeLen(uniqueKeys(dst, content), m)
	}
	return dst // EMPTY
}

// appendFormatted writes fmt's text for format and args as a string value
// (valid UTF-8). It allocates, as fmt does.
func appendFormatted(dst []byte, format string, args ...any) []byte {
	dst, m := openLen(dst, fAVString)
	return closeLen(fixUTF8(fmt.Appendf(dst, format, args...), m), m)
}

// fixUTF8 replaces each invalid UTF-8 byte of dst[from:] with U+FFFD (see
// appendString).
func fixUTF8(dst []byte, from int) []byte {
	if utf8.Valid(dst[from:]) {
		return dst
	}
	fixed := appendFixedUTF8(nil, dst[from:])
	return append(dst[:from], fixed...)
}

// errorText is err.Error() with a panic recovered as log/slog's handlers
// do: "<nil>" when err is a nil pointer (a typed nil *T whose Error
// dereferences its receiver), else "!PANIC: " and the panic value. The
// fmt fallbacks need no such guard: fmt recovers panics itself (and
// prints "<nil>" for a nil pointer receiver too).
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
