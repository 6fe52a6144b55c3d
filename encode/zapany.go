package encode

// The rest of zap.Any's typed cases: the scalars slog has no Kind for
// (float32, complex numbers), pointers to scalars, and the slices that zap
// writes as arrays of its own encodings rather than through encoding/json.

import (
	"reflect"
	"strconv"
	"time"
)

// appendZapTyped writes key and x as zap.Any does when x is one of the
// types above (or a time.Time or time.Duration reached through a pointer),
// and reports whether it was.
func appendZapTyped(b []byte, key string, x any, z zapFmt) ([]byte, bool) {
	switch v := x.(type) {
	case bool, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8, uintptr, float64, string:
		// Only reached through a pointer: slog gives these a Kind.
		b = appendZapKey(b, key, z.console)
		return appendZapScalar(b, v), true
	case float32:
		b = appendZapKey(b, key, z.console)
		return appendZapFloatBits(b, float64(v), 32), true
	case complex128:
		b = appendZapKey(b, key, z.console)
		return appendZapComplex(b, v, 64), true
	case complex64:
		b = appendZapKey(b, key, z.console)
		return appendZapComplex(b, complex128(v), 32), true
	case time.Time:
		b = appendZapKey(b, key, z.console)
		return appendZapTime(b, v, zapFmt{time: z.time}), true
	case time.Duration:
		b = appendZapKey(b, key, z.console)
		return appendZapDuration(b, v, z), true
	case *bool, *int, *int64, *int32, *int16, *int8, *uint, *uint64, *uint32, *uint16, *uint8, *uintptr,
		*float64, *float32, *complex128, *complex64, *string, *time.Time, *time.Duration:
		// zap's Boolp, Intp, ...: nil is null, else the value's field.
		rv := reflect.ValueOf(v)
		if rv.IsNil() {
			b = appendZapKey(b, key, z.console)
			return append(b, "null"...), true
		}
		return appendZapTyped(b, key, rv.Elem().Interface(), z)
	case []int16:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, i int16) []byte { return appendInt(b, int64(i)) }), true
	case []int8:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, i int8) []byte { return appendInt(b, int64(i)) }), true
	case []uint16:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, i uint16) []byte { return appendUint(b, uint64(i)) }), true
	case []uintptr:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, i uintptr) []byte { return appendUint(b, uint64(i)) }), true
	case []float32:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, f float32) []byte { return appendZapFloatBits(b, float64(f), 32) }), true
	case []complex128:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, c complex128) []byte { return appendZapComplex(b, c, 64) }), true
	case []complex64:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, c complex64) []byte { return appendZapComplex(b, complex128(c), 32) }), true
	case []time.Time:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, t time.Time) []byte { return appendZapTime(b, t, zapFmt{time: z.time}) }), true
	case []time.Duration:
		return appendZapKeyedArray(b, key, v, z, func(b []byte, d time.Duration) []byte { return appendZapDuration(b, d, z) }), true
	case []error:
		b = appendZapKey(b, key, z.console)
		return appendZapErrors(b, v, z), true
	}
	return b, false
}

// appendZapScalar writes one of the scalars slog has a Kind for.
func appendZapScalar(b []byte, x any) []byte {
	switch v := x.(type) {
	case bool:
		return appendBool(b, v)
	case int:
		return appendInt(b, int64(v))
	case int64:
		return appendInt(b, v)
	case int32:
		return appendInt(b, int64(v))
	case int16:
		return appendInt(b, int64(v))
	case int8:
		return appendInt(b, int64(v))
	case uint:
		return appendUint(b, uint64(v))
	case uint64:
		return appendUint(b, v)
	case uint32:
		return appendUint(b, uint64(v))
	case uint16:
		return appendUint(b, uint64(v))
	case uint8:
		return appendUint(b, uint64(v))
	case uintptr:
		return appendUint(b, uint64(v))
	case float64:
		return appendZapFloat(b, v)
	}
	return appendZapString(b, x.(string))
}

// appendZapFloatBits is appendZapFloat for a value of bitSize bits: a
// float32 is written with the fewest digits that read back as that float32.
func appendZapFloatBits(b []byte, f float64, bitSize int) []byte {
	if bitSize == 64 {
		return appendZapFloat(b, f)
	}
	if s := appendZapFloat(nil, f); s[0] == '"' { // NaN or an infinity
		return append(b, s...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, bitSize)
}

// appendZapComplex is zap's appendComplex: "REAL+IMAGi" with each part
// written with precision bits.
func appendZapComplex(b []byte, c complex128, precision int) []byte {
	r, i := real(c), imag(c)
	b = append(b, '"')
	b = strconv.AppendFloat(b, r, 'f', -1, precision)
	if i >= 0 {
		b = append(b, '+')
	}
	b = strconv.AppendFloat(b, i, 'f', -1, precision)
	return append(b, 'i', '"')
}

// appendZapDuration writes d as the format's duration encoder: a string
// in ZapConsole (StringDurationEncoder), float seconds in ZapJSON.
func appendZapDuration(b []byte, d time.Duration, z zapFmt) []byte {
	if z.console {
		b = append(b, '"')
		b = appendDuration(b, d)
		return append(b, '"')
	}
	return appendZapFloat(b, float64(d)/float64(time.Second))
}

// appendZapKeyedArray writes key and s as a zap array.
func appendZapKeyedArray[T any](b []byte, key string, s []T, z zapFmt, elem func([]byte, T) []byte) []byte {
	b = appendZapKey(b, key, z.console)
	return appendZapArray(b, s, z, elem)
}

// appendZapErrors is zap.Errors' array: each non-nil error an object with
// its "error" field (and "errorVerbose"), nil errors left out.
func appendZapErrors(b []byte, errs []error, z zapFmt) []byte {
	b = append(b, '[')
	first := true
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !first {
			b = append(b, ',')
			if z.console {
				b = append(b, ' ')
			}
		}
		first = false
		b = append(b, '{')
		b = appendZapError(b, "error", err, z)
		b = append(b, '}')
	}
	return append(b, ']')
}
