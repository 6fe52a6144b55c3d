package logrbridge

import (
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"time"

	"github.com/go-logr/logr"
)

// addKVs appends logr key/value pairs to r, in chunks converted on the stack
// (Record.AddAttrs copies them, so the array does not escape).
func (c *config) addKVs(r *slog.Record, kv []any) {
	var chunk [8]slog.Attr
	n := 0
	for i := 0; i < len(kv); i += 2 {
		chunk[n] = c.pair(kv, i)
		n++
		if n == len(chunk) {
			r.AddAttrs(chunk[:n]...)
			n = 0
		}
	}
	if n > 0 {
		r.AddAttrs(chunk[:n]...)
	}
}

// kvToAttrs converts logr key/value pairs into attributes.
func (c *config) kvToAttrs(kv []any) []slog.Attr {
	attrs := make([]slog.Attr, 0, (len(kv)+1)/2)
	for i := 0; i < len(kv); i += 2 {
		attrs = append(attrs, c.pair(kv, i))
	}
	return attrs
}

// pair converts kv[i], kv[i+1]. A non-string key is rendered with fmt.Sprint
// and a final key without a value gets MissingValue; both keep the following
// pairs.
func (c *config) pair(kv []any, i int) slog.Attr {
	key, ok := kv[i].(string)
	if !ok {
		key = keyString(kv[i])
	}
	if i+1 >= len(kv) {
		return slog.String(key, MissingValue)
	}
	return c.attr(key, kv[i+1])
}

func keyString(k any) string {
	// fmt recovers from panicking String/Error methods itself.
	return fmt.Sprint(k)
}

// attr converts one logr pair into an attribute. Plain types take the fast
// path and allocate nothing. The key changes only in [Zapr] mode, where a
// panicking method gives key+"Error" as zapr and zap write it.
func (c *config) attr(key string, v any) slog.Attr {
	if a, ok := c.plainAttr(key, v); ok {
		return a
	}
	if c.convert != nil {
		if a, ok := safeConvert(c.convert, key, v); ok {
			return a
		}
	} else if c.shrink {
		if o, ok := v.(objectMeta); ok {
			return slog.Attr{Key: key, Value: shrink(o)}
		}
	}
	marshaled := false
	if m, ok := v.(logr.Marshaler); ok {
		var p any
		v, p = safeMarshalLog(m)
		if p != nil {
			if c.zapr {
				return slog.String(key+"Error", fmt.Sprintf("PANIC=%s", p)) // zapr's invokeMarshaler
			}
			return slog.String(key, panicString(p))
		}
		if a, ok := c.plainAttr(key, v); ok {
			return a
		}
		marshaled = true
	}
	if c.keepErrors {
		if err, ok := v.(error); ok {
			if _, lv := v.(slog.LogValuer); !lv || c.zapr && marshaled {
				return slog.Any(key, err)
			}
		}
	}
	if c.zapr {
		// zapr resolves a LogValuer but not one that MarshalLog returned;
		// then zap.Any's order: times through pointers before Stringers
		// (the handler writes them), an error is an error even when it is
		// a Stringer, and a MarshalLog result is never a kubeRef group.
		switch x := v.(type) {
		case slog.LogValuer:
			if !marshaled {
				return slog.Attr{Key: key, Value: safeLogValue(x)}
			}
		case *time.Time, *time.Duration:
			return slog.Any(key, v)
		}
		switch x := v.(type) {
		case error:
			return zapTextAttr(key, x)
		case fmt.Stringer:
			return zapTextAttr(key, x)
		}
		return slog.Any(key, v)
	}
	switch x := v.(type) {
	case slog.LogValuer:
		return slog.Attr{Key: key, Value: safeLogValue(x)}
	case fmt.Stringer:
		return slog.String(key, safeString(x))
	case error:
		return slog.String(key, safeError(x))
	}
	if marshaled {
		if ref, ok := kubeRef(v); ok {
			return slog.Attr{Key: key, Value: ref}
		}
	}
	return slog.Any(key, v)
}

// plainAttr is plainValue's attribute, except that in Zapr mode a float32
// becomes the float64 with the same shortest decimal digits, which zap
// writes as it writes the float32 (0.1, not 0.10000000149011612).
func (c *config) plainAttr(key string, v any) (slog.Attr, bool) {
	val, ok := plainValue(v)
	if !ok {
		return slog.Attr{}, false
	}
	if c.zapr && v == nil && key == "" {
		// zap writes "":null; the zero Attr would be skipped.
		return slog.Any("", (*nullValue)(nil)), true
	}
	if c.zapr && val.Kind() == slog.KindFloat64 {
		if f, ok := v.(float32); ok {
			val = slog.Float64Value(float32Digits(f))
		}
	}
	return slog.Attr{Key: key, Value: val}, true
}

// nullValue is a nil pointer that encoding/json writes as null.
type nullValue struct{}

// float32Digits is the float64 nearest to f's shortest decimal form.
func float32Digits(f float32) float64 {
	var buf [32]byte
	f64, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)), 64)
	if err != nil { // not reached: the form parses, NaN and infinities too
		return float64(f)
	}
	return f64
}

// plainValue handles the types slog has a Kind for, without boxing again.
func plainValue(v any) (slog.Value, bool) {
	switch x := v.(type) {
	case nil:
		return slog.AnyValue(nil), true
	case string:
		return slog.StringValue(x), true
	case int:
		return slog.IntValue(x), true
	case int64:
		return slog.Int64Value(x), true
	case int32:
		return slog.Int64Value(int64(x)), true
	case int16:
		return slog.Int64Value(int64(x)), true
	case int8:
		return slog.Int64Value(int64(x)), true
	case uint:
		return slog.Uint64Value(uint64(x)), true
	case uint64:
		return slog.Uint64Value(x), true
	case uint32:
		return slog.Uint64Value(uint64(x)), true
	case uint16:
		return slog.Uint64Value(uint64(x)), true
	case uint8:
		return slog.Uint64Value(uint64(x)), true
	case float64:
		return slog.Float64Value(x), true
	case float32:
		return slog.Float64Value(float64(x)), true
	case bool:
		return slog.BoolValue(x), true
	case time.Duration:
		return slog.DurationValue(x), true
	case time.Time:
		return slog.TimeValue(x), true
	case slog.Value:
		return x, true
	}
	return slog.Value{}, false
}

// panicString renders a recovered panic the way klog and funcr do.
func panicString(p any) string { return fmt.Sprintf("<panic: %v>", p) }

func safeMarshalLog(m logr.Marshaler) (v any, p any) {
	defer func() {
		if r := recover(); r != nil {
			v, p = nil, r
		}
	}()
	return m.MarshalLog(), nil
}

// safeConvert calls a FieldConverter; a panic becomes the panic string.
func safeConvert(fn func(string, any) (slog.Attr, bool), key string, v any) (a slog.Attr, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			a, ok = slog.String(key, panicString(r)), true
		}
	}()
	return fn(key, v)
}

func safeString(s fmt.Stringer) (str string) {
	defer func() {
		if r := recover(); r != nil {
			str = panicString(r)
		}
	}()
	return s.String()
}

func safeError(e error) (str string) {
	defer func() {
		if r := recover(); r != nil {
			str = panicString(r)
		}
	}()
	return e.Error()
}

// zapTextAttr is key and the text of v, an error (Error) or else a
// fmt.Stringer (String), as zap's encodeError and encodeStringer write it:
// a panic on a nil pointer (a method that does not guard against nil, or a
// value receiver) gives "<nil>", any other panic key+"Error" with
// "PANIC=<value>".
func zapTextAttr(key string, v any) (a slog.Attr) {
	defer func() {
		if r := recover(); r != nil {
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
				a = slog.String(key, "<nil>")
				return
			}
			a = slog.String(key+"Error", fmt.Sprintf("PANIC=%v", r))
		}
	}()
	if err, ok := v.(error); ok {
		return slog.String(key, err.Error())
	}
	return slog.String(key, v.(fmt.Stringer).String())
}

// safeLogValue resolves a LogValuer; a panic in its LogValue becomes the
// panic string (slog's own Resolve catches panics further down the chain).
func safeLogValue(lv slog.LogValuer) (val slog.Value) {
	defer func() {
		if r := recover(); r != nil {
			val = slog.StringValue(panicString(r))
		}
	}()
	return lv.LogValue().Resolve()
}

// objectMeta is the part of a Kubernetes object that ShrinkObjects keeps.
type objectMeta interface {
	GetName() string
	GetNamespace() string
}

func shrink(o objectMeta) (val slog.Value) {
	if rv := reflect.ValueOf(o); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return slog.AnyValue(nil)
	}
	defer func() {
		if r := recover(); r != nil {
			val = slog.StringValue(panicString(r))
		}
	}()
	return refValue(o.GetName(), o.GetNamespace())
}

func refValue(name, namespace string) slog.Value {
	if namespace == "" {
		return slog.GroupValue(slog.String("name", name))
	}
	return slog.GroupValue(slog.String("name", name), slog.String("namespace", namespace))
}

// kubeRef recognises what klog.ObjectRef and types.NamespacedName return from
// MarshalLog: a struct with exactly the string fields Name and Namespace.
func kubeRef(v any) (slog.Value, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct || rv.NumField() != 2 {
		return slog.Value{}, false
	}
	t := rv.Type()
	name, ns := -1, -1
	for i := range 2 {
		f := t.Field(i)
		if f.Type.Kind() != reflect.String || !f.IsExported() {
			return slog.Value{}, false
		}
		switch f.Name {
		case "Name":
			name = i
		case "Namespace":
			ns = i
		}
	}
	if name < 0 || ns < 0 {
		return slog.Value{}, false
	}
	return refValue(rv.Field(name).String(), rv.Field(ns).String()), true
}
