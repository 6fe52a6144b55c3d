package encode

// Attribute values in the zap formats: an attribute as zapr's encodeSlog
// hands it to zap, and the zap.Any, NamedError and Stringer encodings.

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"reflect"
	"time"
)

// appendZapAttr writes one attribute as zapr's encodeSlog hands it to zap,
// within the record's work budget bud (see budget.go) and at group nesting
// depth.
func (e *Encoder) appendZapAttr(b []byte, a slog.Attr, z zapFmt, groups []string, bud *budget, depth int) []byte {
	switch {
	case bud.truncated:
		return b
	case !bud.fits(len(b)):
		bud.truncated = true
		return appendZapString(appendZapKey(b, a.Key, z.console), TruncatedValue)
	}
	bud.take()
	if e.c.rep != nil && a.Value.Kind() != slog.KindGroup {
		a = e.c.rep(groups, a)
	}
	v := a.Value
	k := v.Kind()
	if k == slog.KindLogValuer {
		v = v.Resolve()
		k = v.Kind()
	}
	switch k {
	case slog.KindGroup:
		as := v.Group()
		if depth >= maxDepth {
			return appendZapString(appendZapKey(b, a.Key, z.console), errDepth)
		}
		if a.Key == "" {
			for _, g := range as {
				b = e.appendZapAttr(b, g, z, groups, bud, depth+1)
			}
			return b
		}
		if len(as) == 0 {
			return b
		}
		if e.c.rep != nil {
			groups = append(groups[:len(groups):len(groups)], a.Key)
		}
		b = appendZapKey(b, a.Key, z.console)
		b = append(b, '{')
		for _, g := range as {
			b = e.appendZapAttr(b, g, z, groups, bud, depth+1)
		}
		return append(b, '}')
	case slog.KindAny:
		if a.Key == "" && v.Any() == nil { // the zero Attr
			return b
		}
		return appendZapAny(b, a.Key, v.Any(), z)
	}
	b = appendZapKey(b, a.Key, z.console)
	switch k {
	case slog.KindString:
		return appendZapString(b, v.String())
	case slog.KindInt64:
		return appendInt(b, v.Int64())
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, v.Bool())
	case slog.KindFloat64:
		return appendZapFloat(b, v.Float64())
	case slog.KindDuration:
		return appendZapDuration(b, v.Duration(), z)
	default: // slog.KindTime
		return appendZapTime(b, v.Time(), zapFmt{time: z.time})
	}
}

// appendZapAny writes key and x the way zap.Any does for the types zapr
// passes it.
func appendZapAny(b []byte, key string, x any, z zapFmt) []byte {
	switch v := x.(type) {
	case nil:
		b = appendZapKey(b, key, z.console)
		return append(b, "null"...)
	case *time.Time, *time.Duration: // Stringers that zap.Any takes as times
		b, _ = appendZapTyped(b, key, v, z)
		return b
	case error:
		return appendZapError(b, key, v, z)
	case fmt.Stringer:
		s, err := zapStringer(v)
		if err != "" {
			return appendZapStringField(b, key+"Error", err, z)
		}
		return appendZapStringField(b, key, s, z)
	case []byte:
		b = appendZapKey(b, key, z.console)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"')
	case []string:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendZapString)
	case []int:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i int) []byte { return appendInt(b, int64(i)) })
	case []int64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendInt)
	case []int32:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i int32) []byte { return appendInt(b, int64(i)) })
	case []uint:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i uint) []byte { return appendUint(b, uint64(i)) })
	case []uint64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendUint)
	case []uint32:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i uint32) []byte { return appendUint(b, uint64(i)) })
	case []float64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendZapFloat)
	case []bool:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendBool)
	}
	if nb, ok := appendZapTyped(b, key, x, z); ok {
		return nb
	}
	// zap.Reflect: encoding/json with HTML escaping off; on failure zap
	// writes KEYError instead of the field.
	mark := len(b)
	b = appendZapKey(b, key, z.console)
	if err := appendZapReflected(&b, x); err != "" {
		return appendZapStringField(b[:mark], key+"Error", err, z)
	}
	return b
}

// appendZapReflected is appendJSONAny with a panic caught and reported
// as an error text.
func appendZapReflected(b *[]byte, x any) (errText string) {
	n := len(*b)
	defer func() {
		if r := recover(); r != nil {
			*b = (*b)[:n]
			errText = fmt.Sprintf("PANIC=%v", r)
		}
	}()
	if err := appendJSONAny(b, x); err != nil {
		*b = (*b)[:n]
		return err.Error()
	}
	return ""
}

// appendZapError is zap.NamedError's encoding: the Error() text, and
// KEYVerbose with the %+v text when the error is a fmt.Formatter that adds
// to it. (zap also writes KEYCauses for multierr-style groups; zapr's
// users rarely pass those and they are written as their text here.)
func appendZapError(b []byte, key string, err error, z zapFmt) []byte {
	msg, ok := zapErrorText(err)
	if !ok {
		return appendZapStringField(b, key+"Error", msg, z)
	}
	b = appendZapStringField(b, key, msg, z)
	if _, isFormatter := err.(fmt.Formatter); isFormatter {
		if verbose := fmt.Sprintf("%+v", err); verbose != msg {
			b = appendZapStringField(b, key+"Verbose", verbose, z)
		}
	}
	return b
}

// zapErrorText is err.Error() as zap's encodeError calls it: a panic from
// a nil pointer is "<nil>", any other panic "PANIC=..." reported as not ok.
func zapErrorText(err error) (msg string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(err); v.Kind() == reflect.Pointer && v.IsNil() {
				msg, ok = "<nil>", true
				return
			}
			msg, ok = fmt.Sprintf("PANIC=%v", r), false
		}
	}()
	return err.Error(), true
}

// zapStringer is String() as zap's encodeStringer calls it; errText is set
// when it panicked (other than on a nil pointer, which gives "<nil>").
func zapStringer(s fmt.Stringer) (str, errText string) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(s); v.Kind() == reflect.Pointer && v.IsNil() {
				str, errText = "<nil>", ""
				return
			}
			str, errText = "", fmt.Sprintf("PANIC=%v", r)
		}
	}()
	return s.String(), ""
}

func appendZapStringField(b []byte, key, s string, z zapFmt) []byte {
	b = appendZapKey(b, key, z.console)
	return appendZapString(b, s)
}

// appendZapArray writes a zap array: elements separated by "," (", " in
// the console encoding).
func appendZapArray[T any](b []byte, s []T, z zapFmt, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
			if z.console {
				b = append(b, ' ')
			}
		}
		b = elem(b, v)
	}
	return append(b, ']')
}
