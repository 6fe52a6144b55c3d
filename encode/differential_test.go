package encode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	diffSeed  = flag.Uint64("diff.seed", 0, "seed of TestDifferential (0: a new one per run)")
	diffCases = flag.Int("diff.cases", 3000, "number of TestDifferential cases")
)

// TestDifferential compares random records, through random derivation
// chains, with random ReplaceAttr functions and AddSource, with log/slog:
// JSON and Text byte for byte, and the key paths of Logfmt and Console with
// Text's. Rerun a failure with -diff.seed=N (printed on failure).
func TestDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	pc := callerPC()
	for i := range *diffCases {
		g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		c := g.testCase(pc)
		if !t.Run(fmt.Sprint(i), func(t *testing.T) { c.check(t) }) {
			t.Fatalf("case %d failed: rerun with -run 'TestDifferential/^%d$' -diff.seed=%d\n%s", i, i, seed, c)
		}
	}
	t.Logf("seed %d, %d cases", seed, *diffCases)
}

type diffCase struct {
	repName   string
	rep       func([]string, slog.Attr) slog.Attr
	addSource bool
	chain     []step
	rec       slog.Record
}

func (c diffCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ReplaceAttr %s, AddSource %v, level %v, msg %q, time %v\n", c.repName, c.addSource, c.rec.Level, c.rec.Message, c.rec.Time)
	for _, s := range c.chain {
		if s.group != "" {
			fmt.Fprintf(&b, "  WithGroup(%q)\n", s.group)
		} else {
			fmt.Fprintf(&b, "  WithAttrs(%v)\n", s.attrs)
		}
	}
	c.rec.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, "  attr %v\n", a); return true })
	return b.String()
}

func (c diffCase) encoder(f Format) *Encoder {
	e := New(Options{Format: f, AddSource: c.addSource, ReplaceAttr: c.rep, SlogLevelNames: true})
	for _, s := range c.chain {
		if s.group != "" {
			e = e.WithGroup(s.group)
		} else {
			e = e.WithAttrs(s.attrs)
		}
	}
	return e
}

// header is c's record without attributes, through no derivation: the
// built-in fields alone.
func (c diffCase) header() slog.Record {
	return slog.NewRecord(c.rec.Time, c.rec.Level, c.rec.Message, c.rec.PC)
}

func (c diffCase) check(t *testing.T) {
	for _, f := range []Format{JSON, Text} {
		want := reference(t, f, c.addSource, c.rep, c.chain, c.rec)
		got := string(c.encoder(f).Append(nil, c.rec, nil))
		if want != got {
			requireSame(t, want, got, fmt.Sprintf("format %d", f))
			require.Equal(t, want, got) // requireSame normalises stacks; none are expected here
		}
	}
	text := string(c.encoder(Text).Append(nil, c.rec, nil))
	textKeys := keys(parseSlogText(t, text))

	// Logfmt: the same keys, sanitized, with the built-in time keyed ts.
	want := make([]string, len(textKeys))
	for i, k := range textKeys {
		switch {
		case i == 0 && k == slog.TimeKey && !c.rec.Time.IsZero():
			k = "ts"
		case k == "":
			k = "_"
		default:
			k = sanitizeKey(k)
		}
		want[i] = k
	}
	require.Equal(t, want, keys(decodeLogfmt(t, c.encoder(Logfmt).Append(nil, c.rec, nil))), "logfmt keys; text: %q", text)

	// Console: after its header columns, the keys of Text's attributes.
	nBuiltin := len(parseSlogText(t, string(New(Options{Format: Text, AddSource: c.addSource, ReplaceAttr: c.rep, SlogLevelNames: true}).Append(nil, c.header(), nil))))
	head := New(Options{Format: Console, AddSource: c.addSource, ReplaceAttr: c.rep, SlogLevelNames: true}).Append(nil, c.header(), nil)
	line := c.encoder(Console).Append(nil, c.rec, nil)
	require.True(t, strings.HasPrefix(string(line), string(head[:len(head)-1])), "console line %q does not start with its header %q", line, head)
	rest := strings.TrimLeft(string(line[len(head)-1:]), " ")
	require.Equal(t, textKeys[nBuiltin:], keys(parseSlogText(t, rest)), "console keys; text: %q, console: %q", text, line)

	// AppendRecord (the handler's path, which Append calls) gets the
	// record by pointer: it must leave it as it was, attributes past the
	// fifth (in the shared back array) and group contents included. The
	// record is compared as slog renders it, before and after.
	before := renderRecord(t, c.rec)
	for _, f := range []Format{JSON, Text, Logfmt, Console} {
		c.encoder(f).AppendRecord(nil, &c.rec, nil)
		require.Equal(t, before, renderRecord(t, c.rec), "AppendRecord modified the record (format %d)", f)
	}
}

// renderRecord is r as slog's JSONHandler writes it, with its source.
func renderRecord(t *testing.T, r slog.Record) string {
	var b strings.Builder
	require.NoError(t, slog.NewJSONHandler(&b, &slog.HandlerOptions{AddSource: true}).Handle(context.Background(), r))
	return b.String()
}

func keys(pairs []kv) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.k
	}
	return out
}

// gen draws random test inputs.
type gen struct{ r *rand.Rand }

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) testCase(pc uintptr) diffCase {
	c := diffCase{addSource: g.r.IntN(3) == 0}
	c.repName = pick(g, diffReplacerNames...)
	c.rep = diffReplacers[c.repName]
	for range g.r.IntN(5) {
		if g.r.IntN(2) == 0 {
			c.chain = append(c.chain, step{group: pick(g, "", "g", "req", "a b", "x=y", "é", "dot.ted", "\x7f", "q\"")})
		} else {
			c.chain = append(c.chain, step{attrs: g.attrs(1, 3)})
		}
	}
	tm := pick(g, fixedTime, fixedTime.In(tzA), fixedTime.In(tzB), time.Time{}, fixedTime.Add(-time.Hour*24*400).In(tzC))
	if c.addSource && g.r.IntN(4) == 0 {
		pc = 0
	}
	c.rec = slog.NewRecord(tm, pick(g, slog.LevelInfo, slog.LevelDebug, slog.LevelWarn, slog.LevelError, LevelTrace, LevelFatal, slog.Level(3), slog.Level(-13)),
		pick(g, "m", "", "request handled", "a \"quoted\" = msg", "tab\there", "é\u2028"), pc)
	c.rec.AddAttrs(g.attrs(0, 6)...)
	return c
}

func (g *gen) key() string {
	return pick(g, "k", "k", "n", "s", "", "a b", "a=b", "é", "\x01", "dot.ted", "\"q\"", "v", "name", "\xff")
}

func (g *gen) str() string {
	return pick(g, "v", "", " ", "hello world", "a=b", "\"q\"", "\x00", "\x7f", "\xff\xfe", "é", "\u2028", "<html>&", "line\nbreak", "back\\slash", "v")
}

func (g *gen) attrs(depth, maxN int) []slog.Attr {
	as := make([]slog.Attr, g.r.IntN(maxN+1))
	for i := range as {
		as[i] = g.attr(depth)
	}
	return as
}

func (g *gen) attr(depth int) slog.Attr {
	switch n := g.r.IntN(20); {
	case n == 0:
		return slog.Attr{}
	case n == 1 && depth < 4:
		return slog.Group("", anySlice(g.attrs(depth+1, 3))...) // inline group
	default:
		return slog.Attr{Key: g.key(), Value: g.value(depth)}
	}
}

func anySlice(as []slog.Attr) []any {
	out := make([]any, len(as))
	for i, a := range as {
		out[i] = a
	}
	return out
}

func (g *gen) value(depth int) slog.Value {
	n := g.r.IntN(26)
	if depth >= 4 && n >= 24 {
		n = 0
	}
	switch n {
	case 0:
		return slog.StringValue(g.str())
	case 1:
		return slog.Int64Value(pick[int64](g, 0, -1, 42, math.MaxInt64, math.MinInt64))
	case 2:
		return slog.Uint64Value(pick[uint64](g, 0, 7, math.MaxUint64))
	case 3:
		return slog.Float64Value(pick(g, 0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 123456789.125, math.NaN(), math.Inf(1), math.Inf(-1)))
	case 4:
		return slog.BoolValue(g.r.IntN(2) == 0)
	case 5:
		return slog.DurationValue(pick(g, 0, 1500*time.Microsecond, -time.Hour, 3*time.Nanosecond, time.Duration(math.MaxInt64)))
	case 6:
		return slog.TimeValue(pick(g, fixedTime, fixedTime.In(tzB), time.Time{}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)))
	case 7:
		return slog.AnyValue(errors.New(g.str()))
	case 8:
		return slog.AnyValue(stringer{})
	case 9:
		return slog.AnyValue([]byte(g.str()))
	case 10:
		return slog.AnyValue(namedBytes(g.str()))
	case 11:
		return slog.AnyValue(bytesErr(g.str()))
	case 12:
		return slog.AnyValue(map[string]int{"a": 1, "b": 2})
	case 13:
		return slog.AnyValue(point{1, 2, g.str()})
	case 14:
		return slog.AnyValue(nil)
	case 15:
		return slog.AnyValue(textM{g.str()})
	case 16:
		return slog.AnyValue(jsonM{3})
	case 17:
		return slog.AnyValue(jsonErr{})
	case 18:
		var p *point
		return slog.AnyValue(p)
	case 19:
		return slog.AnyValue(pick[any](g, slog.LevelWarn, []int{1, 2}, struct{}{}, "any string", 3.5, &point{Name: "p"}))
	case 20:
		return slog.AnyValue(chainValuer(g.r.IntN(3)))
	case 21:
		return slog.AnyValue(&slog.Source{Function: "f", File: pick(g, "/a/b.go", "/a b/c.go"), Line: 3})
	case 22:
		var e *myErr
		return slog.AnyValue(e)
	case 23:
		return slog.AnyValue(valuer{slog.StringValue(g.str())})
	case 24:
		return slog.AnyValue(valuer{slog.GroupValue(g.attrs(depth+1, 3)...)})
	default:
		return slog.GroupValue(g.attrs(depth+1, 4)...)
	}
}

var diffReplacers = map[string]func([]string, slog.Attr) slog.Attr{
	"nil":      nil,
	"identity": func(_ []string, a slog.Attr) slog.Attr { return a },
	"drop": func(gs []string, a slog.Attr) slog.Attr {
		if a.Key == "k" || (len(gs) == 0 && a.Key == slog.TimeKey) {
			return slog.Attr{}
		}
		return a
	},
	"drop-builtins": func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey || a.Key == slog.SourceKey) {
			return slog.Attr{}
		}
		return a
	},
	"rename": func(_ []string, a slog.Attr) slog.Attr {
		if a.Key != slog.TimeKey {
			a.Key = strings.ToUpper(a.Key) + "_"
		}
		return a
	},
	"path": func(gs []string, a slog.Attr) slog.Attr {
		if a.Key != slog.TimeKey {
			a.Key = strings.Join(gs, "/") + ":" + a.Key
		}
		return a
	},
	"change-kind": func(gs []string, a slog.Attr) slog.Attr {
		switch {
		case len(gs) == 0 && a.Key == slog.LevelKey:
			return slog.Int64(a.Key, int64(a.Value.Any().(slog.Level)))
		case len(gs) == 0 && a.Key == slog.TimeKey:
			return slog.Int64(a.Key, a.Value.Time().Unix())
		case len(gs) == 0 && a.Key == slog.MessageKey:
			return slog.Int(a.Key, len(a.Value.String()))
		case len(gs) == 0 && a.Key == slog.SourceKey:
			return slog.String(a.Key, "src")
		case a.Value.Kind() == slog.KindInt64:
			return slog.String(a.Key, "i:"+a.Value.String())
		case a.Value.Kind() == slog.KindString:
			return slog.Int(a.Key, len(a.Value.String()))
		case a.Value.Kind() == slog.KindAny:
			return slog.Any(a.Key, valuer{slog.StringValue("was any")})
		}
		return a
	},
	"to-group": func(gs []string, a slog.Attr) slog.Attr {
		switch {
		case len(gs) == 0 && a.Key == slog.MessageKey:
			return slog.Group(a.Key, slog.Int("len", len(a.Value.String())))
		case len(gs) == 0 && a.Key == slog.LevelKey:
			return slog.Group("lvl", slog.String("name", a.Value.String()))
		case a.Value.Kind() == slog.KindString && a.Key != "v":
			return slog.Group(a.Key, slog.String("v", a.Value.String()), slog.Int("depth", len(gs)))
		case a.Value.Kind() == slog.KindBool && a.Key != "inl":
			return slog.Group("", slog.Bool("inl", a.Value.Bool()))
		}
		return a
	},
	"drop-in-groups": func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) > 0 {
			return slog.Attr{}
		}
		return a
	},
}

var diffReplacerNames = func() []string {
	var names []string
	for n := range diffReplacers {
		names = append(names, n)
	}
	// Sorted, so that a seed reproduces the same cases.
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return names
}()
