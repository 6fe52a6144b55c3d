package encode

// slog.Any values in the text-like formats, where slog's TextHandler
// writes fmt's %+v: the cases that text is simple for, written without
// fmt. Everything else still goes through fmt.

import (
	"fmt"
	"strconv"
)

// appendFmtText appends the text fmt.Sprintf("%+v", a) makes, for a
// fmt.Stringer that is neither an error nor a fmt.Formatter (its String
// result) and for slices of the unnamed basic types ("[a b c]"); ok is
// false for every other value, and where String panicked (fmt then
// writes its panic text).
func appendFmtText(b []byte, a any) (_ []byte, ok bool) {
	switch x := a.(type) {
	case []string:
		return appendFmtSlice(b, x, func(b []byte, s string) []byte { return append(b, s...) }), true
	case []int:
		return appendFmtSlice(b, x, func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(i), 10) }), true
	case []int64:
		return appendFmtSlice(b, x, func(b []byte, i int64) []byte { return strconv.AppendInt(b, i, 10) }), true
	case []int32:
		return appendFmtSlice(b, x, func(b []byte, i int32) []byte { return strconv.AppendInt(b, int64(i), 10) }), true
	case []uint:
		return appendFmtSlice(b, x, func(b []byte, u uint) []byte { return strconv.AppendUint(b, uint64(u), 10) }), true
	case []uint64:
		return appendFmtSlice(b, x, func(b []byte, u uint64) []byte { return strconv.AppendUint(b, u, 10) }), true
	case []uint32:
		return appendFmtSlice(b, x, func(b []byte, u uint32) []byte { return strconv.AppendUint(b, uint64(u), 10) }), true
	case []float64:
		// fmt's %v of a float: strconv's shortest 'g' form.
		return appendFmtSlice(b, x, func(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'g', -1, 64) }), true
	case []float32:
		return appendFmtSlice(b, x, func(b []byte, f float32) []byte { return strconv.AppendFloat(b, float64(f), 'g', -1, 32) }), true
	case []bool:
		return appendFmtSlice(b, x, strconv.AppendBool), true
	case error, fmt.Formatter:
		return b, false
	case fmt.Stringer:
		if s, ok := safeStringer(x); ok {
			return append(b, s...), true
		}
	}
	return b, false
}

// appendFmtSlice is fmt's %v of a slice: its elements between brackets,
// separated by spaces.
func appendFmtSlice[T any](b []byte, s []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// safeStringer returns s.String(), or false if it panicked.
func safeStringer(s fmt.Stringer) (str string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.String(), true
}
