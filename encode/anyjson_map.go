package encode

// Map plans: keys resolved to strings (a string kind as is, then
// MarshalText, then an integer's decimal) and written in encoding/json's
// order, the byte order of the resolved keys.

import (
	"bytes"
	"encoding"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// mapScratch holds one map's entries while they are sorted; pooled per map
// type so that a map costs no allocation once the pool is warm.
type mapScratch struct {
	keys, vals reflect.Value // slices of the key and element types
	names      []byte        // the resolved keys, back to back
	ends       []int         // ends[i]: the end of entry i's name in names
	order      []int         // entry numbers, sorted by name
	iter       reflect.MapIter
}

// mapPlan is the plan of one map type.
type mapPlan struct {
	t       reflect.Type
	elem    jsonEnc
	keyKind reflect.Kind
	keyText bool // the key type is not a string kind but a TextMarshaler
	// keyAppend: the key's text comes from its AppendText (Go 1.27).
	keyAppend bool
	// elemCopies: the element's encoding depends on addressability (see
	// addrSensitive), so elements are taken as encoding/json takes them,
	// as non-addressable copies, instead of through the pooled slice.
	elemCopies bool
	// sortValid: keys are sorted with invalid UTF-8 replaced, as
	// encoding/json v2 sorts keys that are not of a plain string type.
	sortValid bool
	pool      sync.Pool
}

func newMapEnc(t reflect.Type) jsonEnc {
	kt := t.Key()
	p := &mapPlan{t: t, keyKind: kt.Kind()}
	switch p.keyKind {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !kt.Implements(textMarshalerType) {
			return encUnsupported
		}
	}
	p.keyText = p.keyKind != reflect.String && kt.Implements(textMarshalerType)
	p.keyAppend = jsonV2 && p.keyText && kt.Implements(textAppenderType)
	p.sortValid = jsonV2 && (p.keyKind != reflect.String || hasMarshalMethod(kt))
	p.elem = jsonEncFor(t.Elem())
	p.elemCopies = addrSensitive(t.Elem(), map[reflect.Type]bool{})
	return p.encode
}

func (p *mapPlan) encode(b []byte, v reflect.Value, depth int) []byte {
	if v.IsNil() {
		return append(b, "null"...)
	}
	if depth++; depth > maxNativeDepth {
		stopNative()
	}
	n := v.Len()
	if n == 0 {
		return append(b, "{}"...)
	}
	s, _ := p.pool.Get().(*mapScratch)
	if s == nil {
		s = &mapScratch{}
	}
	if !s.keys.IsValid() || s.keys.Len() < n {
		s.keys = reflect.MakeSlice(reflect.SliceOf(p.t.Key()), n, n)
		s.vals = reflect.MakeSlice(reflect.SliceOf(p.t.Elem()), n, n)
	}
	s.names, s.ends, s.order = s.names[:0], s.ends[:0], s.order[:0]
	s.iter.Reset(v)
	i := 0
	for ; i < n && s.iter.Next(); i++ {
		k := s.keys.Index(i)
		k.SetIterKey(&s.iter)
		s.vals.Index(i).SetIterValue(&s.iter)
		start := len(s.names)
		s.names = p.appendKeyName(s.names, k)
		if p.sortValid && !utf8.Valid(s.names[start:]) {
			// encoding/json v2 sorts these keys as it writes them: each
			// invalid byte as U+FFFD.
			s.names = appendValidUTF8(s.names, start)
		}
		s.ends = append(s.ends, len(s.names))
		s.order = append(s.order, i)
	}
	s.iter.Reset(reflect.Value{})
	name := func(i int) []byte {
		start := 0
		if i > 0 {
			start = s.ends[i-1]
		}
		return s.names[start:s.ends[i]]
	}
	tie := false
	slices.SortFunc(s.order, func(x, y int) int {
		c := bytes.Compare(name(x), name(y))
		tie = tie || c == 0
		return c
	})
	if tie {
		// Two keys written alike (MarshalText results, or keys alike
		// once invalid UTF-8 is replaced): encoding/json's order of
		// them is unspecified; it writes them itself.
		stopNative()
	}
	b = append(b, '{')
	for j, e := range s.order {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendJSONAnyString(b, bytesToString(name(e)))
		b = append(b, ':')
		ev := s.vals.Index(e)
		if p.elemCopies {
			ev = v.MapIndex(s.keys.Index(e))
		}
		b = p.elem(b, ev, depth)
	}
	// Drop the references to the map's keys and values before pooling.
	for j := range i {
		s.keys.Index(j).SetZero()
		s.vals.Index(j).SetZero()
	}
	p.pool.Put(s)
	return append(b, '}')
}

// jsonV2 reports that encoding/json is built on encoding/json/v2 (Go 1.27
// by default), whose map key order differs for keys that are not strings.
const jsonV2 = jsonInvalidUTF8 == "\ufffd"

// hasMarshalMethod reports whether t or *t has a method encoding/json v2
// marshals through.
func hasMarshalMethod(t reflect.Type) bool {
	for _, name := range [...]string{"MarshalJSON", "MarshalJSONTo", "MarshalText", "AppendText"} {
		if _, ok := reflect.PointerTo(t).MethodByName(name); ok {
			return true
		}
	}
	return false
}

// appendValidUTF8 rewrites b[start:] with each invalid UTF-8 byte replaced
// by U+FFFD.
func appendValidUTF8(b []byte, start int) []byte {
	var tmp [64]byte
	name := append(tmp[:0], b[start:]...)
	b = b[:start]
	for len(name) > 0 {
		r, size := utf8.DecodeRune(name)
		b = utf8.AppendRune(b, r)
		name = name[size:]
	}
	return b
}

// appendKeyName appends the map key k resolved as encoding/json resolves
// it.
func (p *mapPlan) appendKeyName(b []byte, k reflect.Value) []byte {
	if p.keyKind == reflect.String {
		return append(b, k.String()...)
	}
	if p.keyText {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return b
		}
		if p.keyAppend { // encoding/json v2 prefers AppendText
			ta, _ := reflect.TypeAssert[encoding.TextAppender](k)
			b, err := ta.AppendText(b)
			if err != nil {
				stopNative()
			}
			return b
		}
		tm, _ := reflect.TypeAssert[encoding.TextMarshaler](k)
		text, err := tm.MarshalText()
		if err != nil {
			stopNative()
		}
		return append(b, text...)
	}
	switch p.keyKind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, k.Int(), 10)
	}
	return strconv.AppendUint(b, k.Uint(), 10)
}

// addrSensitive reports whether a value of type t is encoded differently
// when it is addressable: whether t, or a struct field or array element
// within it, has a MarshalJSON or MarshalText method on its pointer only
// (pointers, slices and interfaces reach values whose addressability does
// not depend on t's).
func addrSensitive(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if (pt.Implements(marshalerType) && !t.Implements(marshalerType)) ||
			(pt.Implements(textMarshalerType) && !t.Implements(textMarshalerType)) ||
			(pt.Implements(textAppenderType) && !t.Implements(textAppenderType)) {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Array:
		return addrSensitive(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if addrSensitive(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
