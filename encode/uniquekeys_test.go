package encode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference for Options.UniqueKeys: the same encoder without it writes
// every key, repeats included; the model folds that line's keys in order,
// each key kept at its first position with its last value, and (JSON)
// object values of one key merged from the last non-object one on. The
// unique line must have no repeated key and equal the model.

// member is one key of a decoded JSON object, in line order; an object
// value is a []member.
type member struct {
	key string
	val any
}

// decodeOrdered decodes a JSON value keeping every member of every object
// in order, repeats included.
func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var ms []member
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			ms = append(ms, member{k.(string), v})
		}
		_, err = d.Token()
		if ms == nil {
			ms = []member{}
		}
		return ms, err
	case json.Delim('['):
		var vs []any
		for d.More() {
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			vs = append(vs, v)
		}
		_, err = d.Token()
		return vs, err
	}
	return tok, nil
}

func decodeLine(t *testing.T, line string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	v, err := decodeOrdered(d)
	require.NoError(t, err, line)
	_, err = d.Token()
	require.ErrorIs(t, err, io.EOF, line)
	return v
}

// foldModel applies the unique-keys rule to a decoded value.
func foldModel(v any) any {
	switch v := v.(type) {
	case []member:
		var out []member
		for _, m := range v {
			i := 0
			for i < len(out) && out[i].key != m.key {
				i++
			}
			if i == len(out) {
				out = append(out, member{m.key, nil})
			}
			old, oldObj := out[i].val.([]member)
			nv, newObj := m.val.([]member)
			if oldObj && newObj {
				out[i].val = append(append([]member{}, old...), nv...)
			} else {
				out[i].val = m.val
			}
		}
		for i := range out {
			out[i].val = foldModel(out[i].val)
		}
		if out == nil {
			out = []member{}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = foldModel(v[i])
		}
		return out
	}
	return v
}

// requireNoRepeats fails if an object in v has a key twice.
func requireNoRepeats(t *testing.T, v any, line string) {
	t.Helper()
	switch v := v.(type) {
	case []member:
		seen := map[string]bool{}
		for _, m := range v {
			require.False(t, seen[m.key], "key %q repeats in %s", m.key, line)
			seen[m.key] = true
			requireNoRepeats(t, m.val, line)
		}
	case []any:
		for _, e := range v {
			requireNoRepeats(t, e, line)
		}
	}
}

// tokens splits a key=value line (Text, Logfmt, Console) into its tokens:
// separated by spaces outside quotes. Tokens without '=' (Console's
// columns) are dropped.
func tokens(line string) []member {
	var out []member
	var cur strings.Builder
	inQ, esc := false, false
	flush := func() {
		tok := cur.String()
		cur.Reset()
		if i := keyEnd(tok); i >= 0 {
			out = append(out, member{tok[:i], tok[i+1:]})
		}
	}
	for _, c := range []byte(strings.TrimSuffix(line, "\n")) {
		switch {
		case esc:
			esc = false
		case inQ && c == '\\':
			esc = true
		case c == '"':
			inQ = !inQ
		case c == ' ' && !inQ:
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// keyEnd returns the index of the first '=' of tok outside quotes, or -1.
func keyEnd(tok string) int {
	inQ, esc := false, false
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; {
		case esc:
			esc = false
		case inQ && c == '\\':
			esc = true
		case c == '"':
			inQ = !inQ
		case c == '=' && !inQ:
			return i
		}
	}
	return -1
}

// uniqueCase is one randomized input.
type uniqueCase struct {
	ops   []func(*Encoder) *Encoder
	desc  []string
	attrs []slog.Attr
	extra []slog.Attr
	msg   string
	rep   bool
}

var uniqueKeyNames = []string{"a", "b", "c", "g", "msg", "level", "time", "message", "a b", "é", "q\"k", "x=y"}

func randAttr(rng *rand.Rand, depth int) slog.Attr {
	k := uniqueKeyNames[rng.IntN(len(uniqueKeyNames))]
	switch n := rng.IntN(10); {
	case n < 3 && depth < 3:
		var as []slog.Attr
		for range rng.IntN(4) {
			as = append(as, randAttr(rng, depth+1))
		}
		return slog.Attr{Key: k, Value: slog.GroupValue(as...)}
	case n == 3:
		return slog.Int(k, rng.IntN(100))
	case n == 4:
		return slog.Bool(k, rng.IntN(2) == 0)
	case n == 5:
		return slog.Any(k, map[string]int{"a": 1, "b": rng.IntN(9)})
	case n == 6:
		return slog.Any(k, errors.New("e r"))
	case n == 7:
		return slog.Float64(k, rng.Float64())
	}
	return slog.String(k, fmt.Sprintf("v%d x", rng.IntN(100)))
}

func randAttrs(rng *rand.Rand, n int) []slog.Attr {
	var as []slog.Attr
	for range rng.IntN(n + 1) {
		as = append(as, randAttr(rng, 0))
	}
	return as
}

func newUniqueCase(seed uint64) uniqueCase {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var c uniqueCase
	for range rng.IntN(5) {
		switch rng.IntN(3) {
		case 0:
			as := randAttrs(rng, 3)
			c.ops = append(c.ops, func(e *Encoder) *Encoder { return e.WithAttrs(as) })
			c.desc = append(c.desc, fmt.Sprintf("WithAttrs%v", as))
		case 1:
			g := uniqueKeyNames[rng.IntN(len(uniqueKeyNames))]
			c.ops = append(c.ops, func(e *Encoder) *Encoder { return e.WithGroup(g) })
			c.desc = append(c.desc, "WithGroup("+g+")")
		default:
			c.ops = append(c.ops, func(e *Encoder) *Encoder { return e.Named("n") })
			c.desc = append(c.desc, "Named")
		}
	}
	c.attrs = randAttrs(rng, 6)
	c.extra = randAttrs(rng, 2)
	c.msg = "hello"
	c.rep = rng.IntN(4) == 0
	return c
}

// renameB is a ReplaceAttr that writes key "b" as "a": the repeats it
// makes exist only after ReplaceAttr.
func renameB(_ []string, a slog.Attr) slog.Attr {
	if a.Key == "b" {
		a.Key = "a"
	}
	return a
}

func (c uniqueCase) lines(f Format) (plain, unique string) {
	var rep func([]string, slog.Attr) slog.Attr
	if c.rep {
		rep = renameB
	}
	r := record(fixedTime, slog.LevelInfo, c.msg, 0, c.attrs)
	for _, u := range []bool{false, true} {
		e := New(Options{Format: f, ReplaceAttr: rep, UniqueKeys: u})
		for _, op := range c.ops {
			e = op(e)
		}
		line := string(e.Append(nil, r, c.extra))
		if u {
			unique = line
		} else {
			plain = line
		}
	}
	return plain, unique
}

// checkUnique checks one case in every format against the model.
func checkUnique(t *testing.T, seed uint64) {
	c := newUniqueCase(seed)
	for _, f := range []Format{JSON, GCPJSON, ECSJSON, ZapJSON, ZapConsole, Text, Logfmt, Console} {
		plain, unique := c.lines(f)
		msg := fmt.Sprintf("seed %d format %d rep %v ops %v attrs %v extra %v\nplain:  %sunique: %s", seed, f, c.rep, c.desc, c.attrs, c.extra, plain, unique)
		switch f {
		case JSON, GCPJSON, ECSJSON, ZapJSON, ZapConsole:
			if f == ZapConsole { // the fields are the JSON object in the last column
				plain, unique = zapConsoleFields(plain), zapConsoleFields(unique)
				if plain == "" {
					require.Empty(t, unique, msg)
					continue
				}
			}
			got := decodeLine(t, unique)
			requireNoRepeats(t, got, msg)
			assert.Equal(t, foldModel(decodeLine(t, plain)), got, msg)
		default:
			want := foldModel(tokensAsMembers(tokens(plain)))
			got := tokensAsMembers(tokens(unique))
			requireNoRepeats(t, got, msg)
			assert.Equal(t, want, got, msg)
		}
	}
}

func tokensAsMembers(ms []member) []member {
	if ms == nil {
		return []member{}
	}
	return ms
}

// zapConsoleFields returns the fields of a ZapConsole line without stack:
// its last column, if it is a JSON object (tabs in values are escaped).
func zapConsoleFields(line string) string {
	line = strings.TrimSuffix(line, "\n")
	col := line[strings.LastIndexByte(line, '\t')+1:]
	if !strings.HasPrefix(col, "{") {
		return ""
	}
	return col
}

func TestUniqueKeysRandomized(t *testing.T) {
	n := uint64(3000)
	if testing.Short() {
		n = 300
	}
	for seed := range n {
		checkUnique(t, seed)
		if t.Failed() {
			return
		}
	}
}

func FuzzUniqueKeys(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkUnique(t, seed) })
}

// TestUniqueKeysExamples pins the rule on hand-written lines: first
// position, last value, across the logger name, the extra fields, the
// WithAttrs state and the record; groups of one key merged in JSON.
func TestUniqueKeysExamples(t *testing.T) {
	e := func(f Format) *Encoder {
		return New(Options{Format: f, UniqueKeys: true}).
			WithAttrs([]slog.Attr{slog.String("a", "state"), slog.Group("g", slog.Int("x", 1))})
	}
	r := record(fixedTime, slog.LevelInfo, "hi", 0, []slog.Attr{
		slog.Int("b", 1), slog.String("a", "record"), slog.Group("g", slog.Int("y", 2)), slog.Int("b", 3)})
	extra := []slog.Attr{slog.String("b", "extra")}
	tests := []struct {
		f    Format
		want string
	}{
		{JSON, `{"time":"2024-05-17T10:30:45.123456789Z","level":"INFO","msg":"hi","b":3,"a":"record","g":{"x":1,"y":2}}`},
		{Text, `time=2024-05-17T10:30:45.123Z level=INFO msg=hi b=3 a=record g.x=1 g.y=2`},
		{Logfmt, `ts=2024-05-17T10:30:45.123Z level=info msg=hi b=3 a=record g.x=1 g.y=2`},
		{Console, `10:30:45.123 INFO  hi b=3 a=record g.x=1 g.y=2`},
		{ZapJSON, `{"level":"info","ts":"2024-05-17T10:30:45Z","msg":"hi","b":3,"a":"record","g":{"x":1,"y":2}}`},
		{ZapConsole, "2024-05-17T10:30:45Z\tINFO\thi\t{\"b\": 3, \"a\": \"record\", \"g\": {\"x\": 1, \"y\": 2}}"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want+"\n", string(e(tt.f).Append(nil, r, extra)), "format %d", tt.f)
	}
	// Off by default: slog's bytes, repeats included.
	plain := New(Options{}).WithAttrs([]slog.Attr{slog.String("a", "state")})
	assert.Equal(t, `{"time":"2024-05-17T10:30:45.123456789Z","level":"INFO","msg":"hi","b":"extra","a":"state","b":1,"a":"record","g":{"y":2},"b":3}`+"\n",
		string(plain.Append(nil, r, extra)))
}

// TestUniqueKeysEscapedKey: two spellings of one JSON key are one key.
func TestUniqueKeysEscapedKey(t *testing.T) {
	line := []byte(`{"a":1,"\u0061":2,"b":{"c":1,"\u0063":[{"d":1,"d":2}]}}` + "\n")
	got := uniqueJSON(line, 0, len(line)-1, false)
	assert.Equal(t, `{"a":2,"b":{"c":[{"d":2}]}}`+"\n", string(got))
}

// TestUniqueKeysLeavesBadJSONAlone: a line that is not JSON (which the
// encoder never writes) is returned as it is, never half rewritten.
func TestUniqueKeysLeavesBadJSONAlone(t *testing.T) {
	for _, s := range []string{`{"a":1,"a":`, `{"a":1,"a":2`, `{"a" 1,"a":2}`, `{"a":1,,"a":2}`, `["a","a"`, `{"a":"x`} {
		line := []byte(s + "\n")
		assert.Equal(t, s+"\n", string(uniqueJSON(bytes.Clone(line), 0, len(line)-1, false)), s)
	}
}

func TestUniqueKeysNoAllocsWithoutRepeats(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m", 0, accessLogAttrs())
	for _, f := range []Format{JSON, Text, Logfmt, Console, ZapJSON, ZapConsole, GCPJSON} {
		e := New(Options{Format: f, UniqueKeys: true}).WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
		buf := make([]byte, 0, 4096)
		buf = e.Append(buf[:0], r, nil)
		allocs := testing.AllocsPerRun(100, func() { buf = e.Append(buf[:0], r, nil) })
		assert.Zero(t, allocs, "format %d", f)
	}
}

func TestClosingQuote(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{`"a"`, 2}, {`"a\"b"`, 5}, {`"a\\"`, 4}, {`"` + strings.Repeat("x", 15) + `\"y"`, 19},
		{`"` + strings.Repeat("x", 16) + `\\"`, 19}, {`"` + strings.Repeat("x", 40) + `\\\"z"`, 46},
		{`"abc`, -1}, {`"` + strings.Repeat("x", 30), -1}, {`"` + strings.Repeat("x", 15) + `\"`, -1},
	} {
		assert.Equal(t, tt.want, closingQuote([]byte(tt.s), 0, len(tt.s)), tt.s)
	}
}
