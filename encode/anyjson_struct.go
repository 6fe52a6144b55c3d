package encode

// Struct plans: the fields encoding/json writes (its typeFields: json tags,
// embedded structs with Go's promotion and conflict rules, unexported
// fields skipped) and their encoders.

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// jsonField is one field a struct plan writes.
type jsonField struct {
	name      string
	tok       string // `"name":`
	tagged    bool
	index     []int
	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool // the type's IsZero method, for omitzero
	quoted    bool
	enc       jsonEnc
}

func newStructEnc(t reflect.Type) jsonEnc {
	if !plainJSONTags(t) {
		return encFallback
	}
	fields := jsonFields(t)
	return func(b []byte, v reflect.Value, depth int) []byte {
		next := byte('{')
	fieldLoop:
		for i := range fields {
			f := &fields[i]
			fv := v
			for _, j := range f.index {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue fieldLoop
					}
					fv = fv.Elem()
				}
				fv = fv.Field(j)
			}
			if (f.omitEmpty && isEmptyJSONValue(fv)) ||
				(f.omitZero && (f.isZero == nil && fv.IsZero() || (f.isZero != nil && f.isZero(fv)))) {
				continue
			}
			b = append(b, next)
			next = ','
			b = append(b, f.tok...)
			b = f.enc(b, fv, depth)
		}
		if next == '{' {
			return append(b, "{}"...)
		}
		return append(b, '}')
	}
}

// plainJSONTags reports whether every json tag of t's fields, and of the
// structs it embeds, is one whose meaning the Go releases agree on: a name
// that encoding/json accepts (otherwise Go 1.26 ignores it and Go 1.27
// reads part of it) and only the options omitempty, omitzero and string,
// and inline on an embedded struct (Go 1.27 reads others, such as inline
// elsewhere or format, and rejects malformed ones).
func plainJSONTags(t reflect.Type) bool {
	return plainJSONTagsIn(t, map[reflect.Type]bool{})
}

func plainJSONTagsIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		name, opts, hasOpts := strings.Cut(tag, ",")
		if name != "" && !isValidJSONTag(name) {
			return false
		}
		if sf.Anonymous && name == "" && isStructOrPtr(sf.Type) {
			// Its fields are promoted into t's: their tags count too.
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if !plainJSONTagsIn(et, seen) {
				return false
			}
		}
		for hasOpts {
			var o string
			o, opts, hasOpts = strings.Cut(opts, ",")
			switch {
			case o == "omitempty" || o == "omitzero" || o == "string":
			case o == "inline" && sf.Anonymous && name == "" && isStructOrPtr(sf.Type):
				// As Kubernetes' types embed TypeMeta: an embedded
				// struct is promoted by both releases' rules.
			default:
				return false
			}
		}
	}
	return true
}

func isStructOrPtr(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// encFallback writes v with encoding/json: the plan of a type whose output
// the native plans do not reproduce on every Go release. An addressable v
// is passed by its address, so that encoding/json sees it addressable too.
func encFallback(b []byte, v reflect.Value, _ int) []byte {
	a := v.Interface()
	if v.CanAddr() {
		a = v.Addr().Interface()
	}
	if err := appendJSONMarshal(&b, a); err != nil {
		stopNative()
	}
	return b
}

// isEmptyJSONValue is encoding/json's test for omitempty.
func isEmptyJSONValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// jsonFields returns the fields encoding/json writes for struct type t, in
// its order, with their encoders: a breadth-first walk of the embedded
// structs, the dominant field of each name kept.
func jsonFields(t reflect.Type) []jsonField {
	type level struct {
		typ   reflect.Type
		index []int
	}
	current, next := []level{}, []level{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []jsonField
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := range f.typ.NumField() {
				sf := f.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !isValidJSONTag(name) {
					name = ""
				}
				index := append(f.index[:len(f.index):len(f.index)], i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					field := jsonField{
						name:      name,
						tagged:    name != "",
						index:     index,
						omitEmpty: hasTagOption(opts, "omitempty"),
						omitZero:  hasTagOption(opts, "omitzero"),
						quoted:    hasTagOption(opts, "string") && isQuotableKind(ft.Kind()),
					}
					if name == "" {
						field.name = sf.Name
					}
					field.tok = `"` + field.name + `":`
					if field.omitZero {
						field.isZero = isZeroFunc(sf.Type)
					}
					fields = append(fields, field)
					if count[f.typ] > 1 {
						// Two copies at this depth annihilate each other
						// below, as in encoding/json.
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		fi := fields[i]
		for advance = 1; i+advance < len(fields); advance++ {
			if fields[i+advance].name != fi.name {
				break
			}
		}
		if advance == 1 {
			out = append(out, fi)
			continue
		}
		if dominant, ok := dominantJSONField(fields[i : i+advance]); ok {
			out = append(out, dominant)
		}
	}
	fields = out
	slices.SortFunc(fields, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	for i := range fields {
		f := &fields[i]
		ft := jsonFieldType(t, f.index)
		if f.quoted {
			f.enc = newJSONEnc(ft, true, true)
		} else {
			f.enc = jsonEncFor(ft)
		}
	}
	return fields
}

// dominantJSONField returns the field that wins among fields of one name
// (sorted by depth, then tagged first): the shallowest, if it alone is at
// its depth.
func dominantJSONField(fields []jsonField) (jsonField, bool) {
	if len(fields) > 1 && len(fields[0].index) == len(fields[1].index) && fields[0].tagged == fields[1].tagged {
		return jsonField{}, false
	}
	return fields[0], true
}

func jsonFieldType(t reflect.Type, index []int) reflect.Type {
	for _, i := range index {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = t.Field(i).Type
	}
	return t
}

func isQuotableKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.String:
		return true
	}
	return false
}

// isZeroFunc returns the omitzero test that uses t's IsZero method, or nil
// for reflect's zero test, as encoding/json chooses.
func isZeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() ||
				(v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Interface().(isZeroer).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			z, _ := reflect.TypeAssert[isZeroer](v)
			return z.IsZero()
		}
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			z, _ := reflect.TypeAssert[isZeroer](v.Addr())
			return z.IsZero()
		}
	}
	return nil
}

func hasTagOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// isValidJSONTag is encoding/json's test of a tag's name.
func isValidJSONTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
			// Backslash and quote chars are reserved, but otherwise any
			// punctuation chars are allowed in a tag name.
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
