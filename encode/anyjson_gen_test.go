package encode

// A generator of random Go types (reflect.StructOf, slices, maps, pointers,
// interfaces, and declared types with marshalers, embedding and recursion)
// and of random values of them, for the differential tests of the native
// JSON plans.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// Declared types the generator draws from: methods, embedding, recursion
// and unexported fields, which reflect.StructOf cannot make.
type (
	GMarshalV  struct{ A int }    // MarshalJSON on the value, with whitespace
	gMarshalP  struct{ A int }    // MarshalJSON on the pointer only
	gTextV     string             // MarshalText on the value (a string kind)
	gTextP     int                // MarshalText on the pointer only
	gTextKey   struct{ K string } // a map key through MarshalText
	gZeroV     struct{ N int }    // IsZero on the value
	gZeroP     struct{ N int }    // IsZero on the pointer
	gRawString string             // MarshalJSON returning a string with escapes
	GEmb       struct {
		X    int    `json:"x"`
		Y    string `json:",omitempty"`
		Name string
	}
	GEmb2 struct {
		X    float64 `json:"x"` // conflicts with GEmb.X at the same depth
		Name string  `json:"Name"`
	}
	gEmbU struct { // unexported, embedded: its exported fields are promoted
		Z int
		W []string `json:"w,omitempty"`
		//lint:ignore U1000 an unexported field, which encoding/json skips
		z int
	}
	GWithEmbU struct {
		gEmbU
		*GEmb
		Q int `json:"q,string"`
		//lint:ignore U1000 an unexported field, which encoding/json skips
		hidden string
	}
	gNode struct { // recursive through pointers, slices and maps
		Val  int               `json:"val"`
		Next *gNode            `json:"next,omitempty"`
		Kids []gNode           `json:"kids"`
		Map  map[string]*gNode `json:"map,omitempty"`
		Any  any               `json:"any,omitempty"`
	}
	gErr  struct{ Msg string } // an error: marshaled by its fields inside a struct
	gEmbM struct {             // a promoted MarshalJSON: the struct marshals as GMarshalV
		GMarshalV
		B int
	}
	GWeird struct { // tags the Go releases read differently
		//lint:ignore SA5008 malformed on purpose: the plan must leave it to encoding/json
		X int    `json:"bad\"q"`
		Y string `json:"y,inline"`
		Z int    `json:"'z'"`
	}
	gWeirdOuter struct { // GWeird's fields promoted
		GWeird
		W int `json:"w"`
	}
	gAppendV struct{ S string } // AppendText and MarshalText on the value, writing different texts
	gAppendP struct{ S string } // AppendText on the pointer, MarshalText on the value
	gEmbT    struct {           // a promoted MarshalText on the pointer
		*gTextP
		B int
	}
)

func (m GMarshalV) MarshalJSON() ([]byte, error) {
	if m.A%5 == 4 {
		return []byte(fmt.Sprintf(`{ "a" : %d ,"s":" x  y "}`, m.A)), nil
	}
	return []byte(fmt.Sprintf(`{"a":%d}`, m.A)), nil
}
func (m *gMarshalP) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`[%d]`, m.A)), nil }
func (t gTextV) MarshalText() ([]byte, error)     { return []byte("tv:" + string(t)), nil }
func (t *gTextP) MarshalText() ([]byte, error)    { return []byte(fmt.Sprint("tp:", int(*t))), nil }
func (k gTextKey) MarshalText() ([]byte, error)   { return []byte(k.K), nil }
func (z gZeroV) IsZero() bool                     { return z.N%2 == 0 }
func (z *gZeroP) IsZero() bool                    { return z.N%3 == 0 }
func (s gRawString) MarshalJSON() ([]byte, error) { return json.Marshal(string(s)) }
func (e gErr) Error() string                      { return e.Msg }
func (a gAppendV) MarshalText() ([]byte, error)   { return []byte("m:" + a.S), nil }
func (a gAppendV) AppendText(b []byte) ([]byte, error) {
	return append(b, "a:"+a.S...), nil
}
func (a gAppendP) MarshalText() ([]byte, error) { return []byte("m:" + a.S), nil }
func (a *gAppendP) AppendText(b []byte) ([]byte, error) {
	return append(b, "a:"+a.S...), nil
}

var gDeclared = []reflect.Type{
	reflect.TypeFor[GMarshalV](), reflect.TypeFor[gMarshalP](), reflect.TypeFor[*gMarshalP](),
	reflect.TypeFor[gTextV](), reflect.TypeFor[gTextP](), reflect.TypeFor[*gTextP](),
	reflect.TypeFor[gZeroV](), reflect.TypeFor[gZeroP](), reflect.TypeFor[gRawString](),
	reflect.TypeFor[GWithEmbU](), reflect.TypeFor[gNode](), reflect.TypeFor[*gNode](),
	reflect.TypeFor[gErr](), reflect.TypeFor[error](), reflect.TypeFor[time.Time](),
	reflect.TypeFor[time.Duration](), reflect.TypeFor[json.Number](), reflect.TypeFor[json.RawMessage](),
	reflect.TypeFor[[]byte](), reflect.TypeFor[*time.Time](), reflect.TypeFor[json.Marshaler](),
	reflect.TypeFor[gEmbM](), reflect.TypeFor[gEmbT](), reflect.TypeFor[[]gEmbT](),
	reflect.TypeFor[GWeird](), reflect.TypeFor[gWeirdOuter](), reflect.TypeFor[gAppendV](),
	reflect.TypeFor[gAppendP](), reflect.TypeFor[[]gAppendP](), reflect.TypeFor[*gAppendP](),
}

var gScalars = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](),
	reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint8](),
	reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[uintptr](),
	reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[string](), reflect.TypeFor[any](),
}

// typeGen makes random types and values from one seed.
type typeGen struct {
	r *rand.Rand
	// special: how often values may be ones encoding/json rejects (NaN,
	// bad numbers, out-of-range times), in 1/1000.
	special int
}

func newTypeGen(seed uint64) *typeGen {
	return &typeGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), special: 5}
}

func (g *typeGen) n(k int) int { return g.r.IntN(k) }

// typ returns a random type; depth bounds its nesting.
func (g *typeGen) typ(depth int) reflect.Type {
	if depth <= 0 {
		if g.n(4) == 0 {
			return gDeclared[g.n(len(gDeclared))]
		}
		return gScalars[g.n(len(gScalars))]
	}
	switch g.n(10) {
	case 0:
		return gScalars[g.n(len(gScalars))]
	case 1:
		return gDeclared[g.n(len(gDeclared))]
	case 2:
		return reflect.PointerTo(g.typ(depth - 1))
	case 3:
		return reflect.SliceOf(g.typ(depth - 1))
	case 4:
		return reflect.ArrayOf(g.n(3), g.typ(depth-1))
	case 5:
		keys := []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[uint8](),
			reflect.TypeFor[gTextKey](), reflect.TypeFor[gTextV](), reflect.TypeFor[int64](), reflect.TypeFor[gAppendV]()}
		return reflect.MapOf(keys[g.n(len(keys))], g.typ(depth-1))
	default:
		return g.structType(depth - 1)
	}
}

var gFieldNames = []string{"A", "B", "Name", "X", "Y", "Id", "Time", "Q"}

func (g *typeGen) structType(depth int) reflect.Type {
	var fields []reflect.StructField
	used := map[string]bool{}
	for range g.n(6) {
		if g.n(6) == 0 { // an embedded declared struct
			emb := []reflect.Type{reflect.TypeFor[GEmb](), reflect.TypeFor[*GEmb](), reflect.TypeFor[GEmb2](),
				reflect.TypeFor[GWithEmbU]()} // (StructOf's promoted methods are unreliable: see gEmbM)
			t := emb[g.n(len(emb))]
			name := t.Name()
			if t.Kind() == reflect.Pointer {
				name = t.Elem().Name()
			}
			if used[name] {
				continue
			}
			used[name] = true
			f := reflect.StructField{Name: name, Type: t, Anonymous: true}
			switch g.n(6) {
			case 0:
				f.Tag = `json:"emb"`
			case 1:
				f.Tag = `json:",inline"`
			case 2:
				f.Tag = `json:",omitempty,inline"`
			}
			fields = append(fields, f)
			continue
		}
		name := gFieldNames[g.n(len(gFieldNames))]
		if used[name] {
			continue
		}
		used[name] = true
		fields = append(fields, reflect.StructField{Name: name, Type: g.typ(depth), Tag: g.tag()})
	}
	return reflect.StructOf(fields)
}

func (g *typeGen) tag() reflect.StructTag {
	if g.n(3) == 0 {
		return ""
	}
	names := []string{"", "a", "b", "name", "Name", "x", "-", "with space", "ünï", "a<b>&", "bad\"q"}
	var opts []string
	for _, o := range []string{"omitempty", "string", "omitzero"} {
		if g.n(4) == 0 {
			opts = append(opts, o)
		}
	}
	name := names[g.n(len(names))]
	if name == "-" && g.n(2) == 0 {
		opts = nil // "-" alone: the field is skipped
	}
	tag := strings.Join(append([]string{name}, opts...), ",")
	return reflect.StructTag(`json:` + fmt.Sprintf("%q", tag))
}

// value returns a random value of type t.
func (g *typeGen) value(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	g.fill(v, depth)
	return v
}

func (g *typeGen) special1000() bool { return g.n(1000) < g.special }

func (g *typeGen) fill(v reflect.Value, depth int) {
	t := v.Type()
	switch t {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(g.time()))
		return
	case reflect.TypeFor[json.Number]():
		nums := []string{"0", "-1", "1.5e10", "123456789012345678901234567890", "0.000001", "1E-7"}
		s := nums[g.n(len(nums))]
		if g.special1000() {
			s = "01"
		}
		v.SetString(s)
		return
	case reflect.TypeFor[json.RawMessage]():
		raws := []string{`{"a":1}`, ` [1, 2 ,3] `, `"s\u00e9\n"`, "null", `{"x":{"y":[true,false,null]}}`, "\t{ }\n", `"ünï"`}
		if g.n(5) == 0 {
			return // nil: null
		}
		s := raws[g.n(len(raws))]
		if g.special1000() {
			s = `{bad`
		}
		v.SetBytes([]byte(s))
		return
	case reflect.TypeFor[error]():
		if g.n(3) > 0 {
			v.Set(reflect.ValueOf(error(gErr{Msg: g.str()})))
		} else if g.n(2) == 0 {
			v.Set(reflect.ValueOf(errors.New(g.str())))
		}
		return
	case reflect.TypeFor[json.Marshaler]():
		if g.n(2) == 0 {
			v.Set(reflect.ValueOf(json.Marshaler(GMarshalV{A: g.n(10)})))
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(g.n(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(g.int64())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(g.int64()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(g.float(t.Kind() == reflect.Float32))
	case reflect.String:
		v.SetString(g.str())
	case reflect.Pointer:
		if g.n(5) == 0 || depth <= 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.fill(p.Elem(), depth-1)
		v.Set(p)
	case reflect.Slice:
		switch {
		case g.n(6) == 0:
			return // nil
		case g.n(6) == 0 || depth <= 0:
			v.Set(reflect.MakeSlice(t, 0, 0))
			return
		}
		n := g.n(4)
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			g.fill(s.Index(i), depth-1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			g.fill(v.Index(i), depth-1)
		}
	case reflect.Map:
		switch {
		case g.n(6) == 0:
			return
		case g.n(6) == 0 || depth <= 0:
			v.Set(reflect.MakeMap(t))
			return
		}
		m := reflect.MakeMap(t)
		names := map[string]bool{}
		for range g.n(5) {
			k := g.value(t.Key(), 0)
			// Keys written alike leave encoding/json's order unspecified
			// (the plans hand such maps to it, see TestAnyPlanStops).
			name := []rune(fmt.Sprint(k.Interface()))
			if names[string(name)] {
				continue
			}
			names[string(name)] = true
			m.SetMapIndex(k, g.value(t.Elem(), depth-1))
		}
		v.Set(m)
	case reflect.Interface:
		if g.n(4) == 0 || depth <= 0 {
			return
		}
		x := g.value(g.typ(1), depth-1)
		if x.Type().Implements(t) {
			v.Set(x)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				g.fill(f, depth-1)
			}
		}
	}
}

func (g *typeGen) int64() int64 {
	switch g.n(4) {
	case 0:
		return 0
	case 1:
		return int64(g.n(100)) - 50
	case 2:
		return int64(g.r.Uint64())
	}
	return int64(g.r.Uint32())
}

func (g *typeGen) float(is32 bool) float64 {
	if g.special1000() {
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[g.n(3)]
	}
	fs := []float64{0, math.Copysign(0, -1), 1, -2.5, 1e-7, 1e21, 1e20, 123456.789, 1e-6, 5e-324, math.MaxFloat64, 0.1}
	f := fs[g.n(len(fs))]
	if g.n(2) == 0 {
		f = (g.r.Float64() - 0.5) * math.Pow(10, float64(g.n(60)-30))
	}
	if is32 {
		f = float64(float32(f))
		if math.IsInf(f, 0) {
			f = math.MaxFloat32
		}
	}
	return f
}

func (g *typeGen) str() string {
	parts := []string{"a", "hello world", "<b>&amp;", "\u2028", "\u2029", "é", "日本", "\"", "\\", "\n", "\t",
		"\b", "\f", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "\U0001F600", "\ufffd", "/", ""}
	var b strings.Builder
	for range g.n(5) {
		b.WriteString(parts[g.n(len(parts))])
	}
	return b.String()
}

func (g *typeGen) time() time.Time {
	if g.special1000() {
		return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	locs := []*time.Location{time.UTC, time.FixedZone("X", 5*3600+30*60), time.FixedZone("Y", -7*3600), time.Local}
	if g.special1000() { // MarshalJSON fails for offsets of 24 hours or more
		locs = []*time.Location{time.FixedZone("Z", 86400), time.FixedZone("W", -86399)}
	}
	sec := int64(g.r.Uint64()%(253402300799+62135596800)) - 62135596800
	return time.Unix(sec, int64(g.n(4))*int64(g.r.Uint32()%1e9)/3).In(locs[g.n(len(locs))])
}
