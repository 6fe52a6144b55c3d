package encode

// The native JSON encoder for slog.Any values: a plan (a tree of jsonEnc
// functions) per reflect.Type, built once and cached, that writes a value
// byte for byte as encoding/json does with HTML escaping off, as slog's
// JSONHandler calls it. It follows encoding/json's own encoder, rule for
// rule (addressable values and pointer-receiver methods, the "string"
// option, omitempty and omitzero, map key order); the differential tests
// (anyjson_diff_test.go) hold it to encoding/json's output.
//
// Wherever encoding/json would report an error (NaN or ±Inf, an
// unsupported type, a failing or invalid MarshalJSON or MarshalText, an
// invalid json.Number, a nesting deep enough that encoding/json starts
// looking for cycles) and wherever a MarshalJSON result needs more than
// its whitespace removed, the plan stops, and the whole value is handed
// to encoding/json instead, so that its output or its error text is
// encoding/json's own (appendJSONAny).

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// jsonEnc appends v; depth is the pointer, map and slice nesting as
// encoding/json counts it for its cycle check. A jsonEnc panics with
// errJSONNative where encoding/json's output cannot be reproduced.
type jsonEnc func(b []byte, v reflect.Value, depth int) []byte

// jsonNativeStop is the panic value of a plan that stops (see above).
type jsonNativeStop struct{}

var errJSONNative = jsonNativeStop{}

// stopNative abandons the native encoding of the current value.
func stopNative() { panic(errJSONNative) }

// maxNativeDepth is encoding/json's startDetectingCyclesAfter: beyond this
// pointer, map and slice nesting encoding/json looks for cycles and, on
// Go 1.27, may report other errors; the plan leaves such values to it.
const maxNativeDepth = 1000

// appendJSONAny appends a as encoding/json encodes it with HTML escaping
// off, as slog's JSONHandler does, natively where the plan of a's type
// can and through encoding/json otherwise. It returns encoding/json's
// error, if any, leaving buf as it was.
func appendJSONAny(buf *[]byte, a any) error {
	if b, ok := appendJSONNative(*buf, a); ok {
		*buf = b
		return nil
	}
	return appendJSONMarshal(buf, a)
}

// appendJSONNative appends a with its plan; ok is false, and b must be
// dropped, where the plan stopped or a method of a's panicked (encoding/json
// then reproduces that panic, or its error, by itself).
func appendJSONNative(b []byte, a any) (out []byte, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			out, ok = nil, false
		}
	}()
	switch x := a.(type) { // the most common types, without a plan lookup
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONAnyString(b, x), true
	case time.Time:
		return appendMarshaledTime(b, x), true
	}
	v := reflect.ValueOf(a)
	return jsonEncFor(v.Type())(b, v, 0), true
}

// jsonPlans maps a reflect.Type to its jsonEnc (allowing addressable
// values, as encoding/json's typeEncoder).
var jsonPlans sync.Map

// jsonEncFor returns t's cached plan, building it on first use. As in
// encoding/json, a recursive type first finds a stand-in that calls the
// plan once it is built.
func jsonEncFor(t reflect.Type) jsonEnc {
	if f, ok := jsonPlans.Load(t); ok {
		return f.(jsonEnc)
	}
	build := sync.OnceValue(func() jsonEnc { return newJSONEnc(t, true, false) })
	f, loaded := jsonPlans.LoadOrStore(t, jsonEnc(func(b []byte, v reflect.Value, depth int) []byte {
		return build()(b, v, depth)
	}))
	if loaded {
		return f.(jsonEnc)
	}
	enc := build()
	jsonPlans.Store(t, enc)
	return enc
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	textAppenderType  = reflect.TypeFor[encoding.TextAppender]()
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
)

// newJSONEnc builds t's plan as encoding/json's newTypeEncoder does; it
// checks addressability only when allowAddr, and quoted selects the
// "string" field option's encoders for the scalar kinds.
func newJSONEnc(t reflect.Type, allowAddr, quoted bool) jsonEnc {
	switch {
	case t == timeType:
		// time.Time's MarshalJSON (a value method), written natively.
		return encTime
	case t.Kind() == reflect.Pointer && t.Elem() == timeType:
		return ptrEnc(encTime) // the same method through the pointer; nil is null
	}
	if jsonV2 && t.Kind() != reflect.Interface && t != numberType && v2OnlyMethods(t) {
		if quoted {
			return encUnsupported // the "string" option would be lost
		}
		return encFallback
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(marshalerType) {
		return condAddrEnc(encAddrMarshaler, newJSONEnc(t, false, quoted))
	}
	if t.Implements(marshalerType) {
		return encMarshaler
	}
	if jsonV2 && t.Kind() != reflect.Interface && t.Implements(textAppenderType) {
		// encoding/json v2 prefers AppendText to MarshalText.
		return encTextAppender
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(textMarshalerType) {
		return condAddrEnc(encAddrTextMarshaler, newJSONEnc(t, false, quoted))
	}
	if t.Implements(textMarshalerType) {
		return encTextMarshaler
	}
	switch t.Kind() {
	case reflect.Bool:
		return quoteIf(quoted, encBool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return quoteIf(quoted, encInt)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return quoteIf(quoted, encUint)
	case reflect.Float32:
		return quoteIf(quoted, encFloat32)
	case reflect.Float64:
		return quoteIf(quoted, encFloat64)
	case reflect.String:
		switch {
		case t == numberType:
			return quoteIf(quoted, encNumber)
		case quoted:
			return encQuotedString
		}
		return encString
	case reflect.Interface:
		return encInterface
	case reflect.Struct:
		return newStructEnc(t)
	case reflect.Map:
		return newMapEnc(t)
	case reflect.Slice:
		return newSliceEnc(t)
	case reflect.Array:
		return newArrayEnc(t)
	case reflect.Pointer:
		elem := jsonEncFor(t.Elem())
		if quoted {
			elem = newJSONEnc(t.Elem(), true, true) // the field's *T: quoted T
		}
		return ptrEnc(elem)
	default: // chan, func, complex, unsafe.Pointer: encoding/json's error
		return encUnsupported
	}
}

func encUnsupported(b []byte, v reflect.Value, depth int) []byte {
	stopNative()
	return b
}

// quoteIf wraps a scalar encoder in quotes for the "string" option.
func quoteIf(quoted bool, enc jsonEnc) jsonEnc {
	if !quoted {
		return enc
	}
	return func(b []byte, v reflect.Value, depth int) []byte {
		b = append(b, '"')
		b = enc(b, v, depth)
		return append(b, '"')
	}
}

func condAddrEnc(addr, other jsonEnc) jsonEnc {
	return func(b []byte, v reflect.Value, depth int) []byte {
		if v.CanAddr() {
			return addr(b, v, depth)
		}
		return other(b, v, depth)
	}
}

func encTime(b []byte, v reflect.Value, _ int) []byte {
	t, _ := reflect.TypeAssert[time.Time](v)
	return appendMarshaledTime(b, t)
}

func encMarshaler(b []byte, v reflect.Value, _ int) []byte {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...)
	}
	m, ok := reflect.TypeAssert[json.Marshaler](v)
	if !ok {
		return append(b, "null"...)
	}
	return appendMarshalerOutput(b, m)
}

func encAddrMarshaler(b []byte, v reflect.Value, _ int) []byte {
	m, _ := reflect.TypeAssert[json.Marshaler](v.Addr())
	return appendMarshalerOutput(b, m)
}

// appendMarshalerOutput appends m's MarshalJSON result where it is what
// encoding/json writes: valid JSON, with only whitespace to remove.
func appendMarshalerOutput(b []byte, m json.Marshaler) []byte {
	out, err := m.MarshalJSON()
	if err != nil {
		stopNative()
	}
	b, ok := appendCompactJSON(b, out)
	if !ok {
		stopNative()
	}
	return b
}

// v2OnlyMethods reports whether t has a method that encoding/json v2
// calls and the plans do not: MarshalJSONTo (json.Number's, from Go 1.27,
// writes what the plans write for it), or AppendText on the pointer only
// (called for addressable values, where Go 1.26 calls MarshalText).
func v2OnlyMethods(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	if _, ok := pt.MethodByName("MarshalJSONTo"); ok {
		return true
	}
	return t.Kind() != reflect.Pointer && pt.Implements(textAppenderType) && !t.Implements(textAppenderType)
}

func encTextAppender(b []byte, v reflect.Value, _ int) []byte {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...)
	}
	m, _ := reflect.TypeAssert[encoding.TextAppender](v)
	return appendAppendedText(b, m)
}

// appendAppendedText appends m's text, quoted, from its AppendText.
func appendAppendedText(b []byte, m encoding.TextAppender) []byte {
	var tmp [64]byte
	text, err := m.AppendText(tmp[:0])
	if err != nil {
		stopNative()
	}
	return appendJSONAnyString(b, bytesToString(text))
}

func encTextMarshaler(b []byte, v reflect.Value, _ int) []byte {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...)
	}
	m, ok := reflect.TypeAssert[encoding.TextMarshaler](v)
	if !ok {
		return append(b, "null"...)
	}
	return appendMarshaledText(b, m)
}

func encAddrTextMarshaler(b []byte, v reflect.Value, _ int) []byte {
	m, _ := reflect.TypeAssert[encoding.TextMarshaler](v.Addr())
	return appendMarshaledText(b, m)
}

func appendMarshaledText(b []byte, m encoding.TextMarshaler) []byte {
	text, err := m.MarshalText()
	if err != nil {
		stopNative()
	}
	return appendJSONAnyString(b, bytesToString(text))
}

func encBool(b []byte, v reflect.Value, _ int) []byte { return strconv.AppendBool(b, v.Bool()) }
func encInt(b []byte, v reflect.Value, _ int) []byte  { return appendInt(b, v.Int()) }
func encUint(b []byte, v reflect.Value, _ int) []byte { return appendUint(b, v.Uint()) }

func encFloat64(b []byte, v reflect.Value, _ int) []byte {
	f := v.Float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		stopNative()
	}
	return appendJSONFloat(b, f)
}

// encFloat32 is encoding/json's float32 encoding: the shortest text that
// reads back as the same float32, in 'e' form outside [1e-6, 1e21).
func encFloat32(b []byte, v reflect.Value, _ int) []byte {
	f := v.Float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		stopNative()
	}
	return appendJSONFloatBits(b, f, 32)
}

func encNumber(b []byte, v reflect.Value, _ int) []byte {
	s := v.String()
	if s == "" {
		s = "0" // json.Number's zero value
	}
	if !isValidJSONNumber(s) {
		stopNative()
	}
	return append(b, s...)
}

func encString(b []byte, v reflect.Value, _ int) []byte {
	return appendJSONAnyString(b, v.String())
}

// encQuotedString is the "string" option on a string: the quoted string,
// quoted again.
func encQuotedString(b []byte, v reflect.Value, _ int) []byte {
	var tmp [64]byte
	inner := appendJSONAnyString(tmp[:0], v.String())
	return appendJSONAnyString(b, bytesToString(inner))
}

func encInterface(b []byte, v reflect.Value, depth int) []byte {
	if v.IsNil() {
		return append(b, "null"...)
	}
	e := v.Elem()
	return jsonEncFor(e.Type())(b, e, depth)
}

func ptrEnc(elem jsonEnc) jsonEnc {
	return func(b []byte, v reflect.Value, depth int) []byte {
		if v.IsNil() {
			return append(b, "null"...)
		}
		if depth++; depth > maxNativeDepth {
			stopNative()
		}
		return elem(b, v.Elem(), depth)
	}
}

func newSliceEnc(t reflect.Type) jsonEnc {
	if t.Elem().Kind() == reflect.Uint8 {
		p := reflect.PointerTo(t.Elem())
		if !p.Implements(marshalerType) && !p.Implements(textMarshalerType) {
			return encByteSlice
		}
	}
	arr := newArrayEnc(t)
	return func(b []byte, v reflect.Value, depth int) []byte {
		if v.IsNil() {
			return append(b, "null"...)
		}
		if depth++; depth > maxNativeDepth {
			stopNative()
		}
		return arr(b, v, depth)
	}
}

func encByteSlice(b []byte, v reflect.Value, _ int) []byte {
	if v.IsNil() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v.Bytes())
	return append(b, '"')
}

func newArrayEnc(t reflect.Type) jsonEnc {
	elem := jsonEncFor(t.Elem())
	return func(b []byte, v reflect.Value, depth int) []byte {
		b = append(b, '[')
		n := v.Len()
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = elem(b, v.Index(i), depth)
		}
		return append(b, ']')
	}
}
