package encode

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one WithAttrs (attrs != nil) or WithGroup (group != "") derivation.
type step struct {
	group string
	attrs []slog.Attr
}

var chains = map[string][]step{
	"none":     nil,
	"attrs":    {{attrs: []slog.Attr{slog.String("svc", "api"), slog.Int("pid", 7)}}},
	"group":    {{group: "req"}},
	"g-attrs":  {{group: "req"}, {attrs: []slog.Attr{slog.String("id", "r1 x")}}},
	"mixed":    {{attrs: []slog.Attr{slog.Int("a", 1)}}, {group: "g1"}, {attrs: []slog.Attr{slog.Int("b", 2), slog.Group("sub", slog.Int("c", 3))}}, {group: "g2"}, {group: "g 3"}},
	"emptyish": {{attrs: []slog.Attr{slog.Group("eg")}}, {group: "g"}, {attrs: []slog.Attr{{}}}, {attrs: []slog.Attr{slog.Group("", slog.Int("inl", 1))}}},
	"deepg":    {{group: "a"}, {group: "b"}, {attrs: []slog.Attr{slog.Bool("x", true)}}, {group: "c"}},
}

func dropKeys(keys ...string) func([]string, slog.Attr) slog.Attr {
	return func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) == 0 {
			for _, k := range keys {
				if a.Key == k {
					return slog.Attr{}
				}
			}
		}
		return a
	}
}

var replacers = map[string]func([]string, slog.Attr) slog.Attr{
	"nil":      nil,
	"identity": func(_ []string, a slog.Attr) slog.Attr { return a },
	"rename-builtins": func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) == 0 {
			switch a.Key {
			case slog.TimeKey:
				a.Key = "ts"
			case slog.LevelKey:
				a.Key = "severity"
			case slog.MessageKey:
				a.Key = "message"
			case slog.SourceKey:
				a.Key = "src"
			}
		}
		return a
	},
	"drop-time":     dropKeys(slog.TimeKey),
	"drop-builtins": dropKeys(slog.TimeKey, slog.LevelKey, slog.MessageKey, slog.SourceKey),
	"drop-all":      func([]string, slog.Attr) slog.Attr { return slog.Attr{} },
	"upper":         func(_ []string, a slog.Attr) slog.Attr { a.Key = strings.ToUpper(a.Key); return a },
	"path": func(gs []string, a slog.Attr) slog.Attr {
		a.Key = strings.Join(gs, "/") + ":" + a.Key
		return a
	},
	"drop-in-groups": func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) > 0 {
			return slog.Attr{}
		}
		return a
	},
	"to-group": func(gs []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindString && a.Key != slog.MessageKey && a.Key != "v" {
			return slog.Group(a.Key, slog.String("v", a.Value.String()), slog.Int("n", len(gs)))
		}
		return a
	},
	"to-valuer": func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindInt64 || a.Key == slog.LevelKey {
			return slog.Any(a.Key, valuer{slog.StringValue(fmt.Sprint("v:", a.Value))})
		}
		return a
	},
	"level-and-time": func(gs []string, a slog.Attr) slog.Attr {
		switch {
		case len(gs) == 0 && a.Key == slog.LevelKey:
			return slog.Any(a.Key, a.Value.Any().(slog.Level)+4)
		case len(gs) == 0 && a.Key == slog.TimeKey:
			return slog.Int64(a.Key, a.Value.Time().Unix())
		case a.Key == "s":
			return slog.Any("s", &slog.Source{Function: "f", File: "a b.go", Line: 3})
		case a.Key == "int":
			return slog.Any("int", &slog.Source{})
		case a.Key == slog.SourceKey:
			return slog.String(a.Key, fmt.Sprint(a.Value.Any().(*slog.Source) != nil))
		}
		return a
	},
	"source-group-fields": func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) == 1 && gs[0] == slog.SourceKey && a.Key == "file" {
			return slog.String("file", "redacted")
		}
		return a
	},
}

// reference renders r with the real slog handler, without the two slog
// bugs this encoder deliberately does not reproduce: groups that turn out
// empty are removed from the inputs first (see slogFixed), and before Go
// 1.27 a JSON time outside years [0,9999] is its error string alone (see
// slogTimeFixed).
func reference(t testing.TB, format Format, addSource bool, rep func([]string, slog.Attr) slog.Attr, chain []step, r slog.Record) string {
	out, _ := referenceFixed(t, format, addSource, rep, chain, r)
	return out
}

// referenceFixed is reference, and reports how many groups that turn out
// empty it removed (zero: the output is slog's, but for a time outside
// years [0,9999] before Go 1.27, see slogTimeFixed).
func referenceFixed(t testing.TB, format Format, addSource bool, rep func([]string, slog.Attr) slog.Attr, chain []step, r slog.Record) (string, int) {
	p := &slogFixed{rep: rep, json: format == JSON}
	chain, r, rep = p.inputs(chain, r)
	out := slogOutput(t, format, addSource, rep, chain, r)
	if format == JSON {
		out = slogTimeFixed(out)
	}
	return out, p.pruned
}

// slogOutput renders r with the real slog handler, as it is.
func slogOutput(t testing.TB, format Format, addSource bool, rep func([]string, slog.Attr) slog.Attr, chain []step, r slog.Record) string {
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{AddSource: addSource, ReplaceAttr: rep, Level: slog.Level(-1000)}
	var h slog.Handler
	if format == JSON {
		h = slog.NewJSONHandler(&buf, opts)
	} else {
		h = slog.NewTextHandler(&buf, opts)
	}
	for _, s := range chain {
		if s.group != "" {
			h = h.WithGroup(s.group)
		} else {
			h = h.WithAttrs(s.attrs)
		}
	}
	require.NoError(t, h.Handle(context.Background(), r))
	return buf.String()
}

func ours(format Format, addSource bool, rep func([]string, slog.Attr) slog.Attr, chain []step, r slog.Record, slogLevels bool) string {
	e := New(Options{Format: format, AddSource: addSource, ReplaceAttr: rep, SlogLevelNames: slogLevels})
	for _, s := range chain {
		if s.group != "" {
			e = e.WithGroup(s.group)
		} else {
			e = e.WithAttrs(s.attrs)
		}
	}
	return string(e.Append(nil, r, nil))
}

var stackFrame = regexp.MustCompile(`called from [^\\\n]*(\\n|\n)`)

// normalizeStacks blanks the call stacks slog embeds in the error for a
// panicking LogValue: they name the caller's frames, which differ by design.
func normalizeStacks(s string) string {
	return stackFrame.ReplaceAllString(s, "called from F$1")
}

// requireSame compares two long strings and reports the first difference compactly.
func requireSame(t testing.TB, want, got string, msg string) {
	t.Helper()
	if want == got {
		return
	}
	want, got = normalizeStacks(want), normalizeStacks(got)
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-80)
	require.Failf(t, "output differs from slog", "%s: first difference at byte %d (len want %d, got %d)\nwant: %q\n got: %q",
		msg, i, len(want), len(got), want[lo:min(len(want), i+80)], got[lo:min(len(got), i+80)])
}

func record(t time.Time, level slog.Level, msg string, pc uintptr, attrs []slog.Attr) slog.Record {
	r := slog.NewRecord(t, level, msg, pc)
	r.AddAttrs(attrs...)
	return r
}

func withoutBig(as []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for _, a := range as {
		if a.Key != "big" {
			out = append(out, a)
		}
	}
	return out
}

func TestIdentityKinds(t *testing.T) {
	pc := callerPC()
	for name, attrs := range kindCases() {
		if name == "all" || name == "attr/big" {
			continue
		}
		for _, repName := range []string{"nil", "identity", "upper", "to-group", "path"} {
			for _, chainName := range []string{"none", "g-attrs"} {
				for _, f := range []Format{JSON, Text} {
					r := record(fixedTime, slog.LevelInfo, "kinds", pc, attrs)
					rep, chain := replacers[repName], chains[chainName]
					want := reference(t, f, true, rep, chain, r)
					got := ours(f, true, rep, chain, r, true)
					requireSame(t, want, got, fmt.Sprintf("%s rep=%s chain=%s format=%d", name, repName, chainName, f))
				}
			}
		}
	}
}

func TestIdentityMatrix(t *testing.T) {
	pc := callerPC()
	attrs := withoutBig(valueAttrs())
	times := []time.Time{fixedTime, {}, fixedTime.In(tzB), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)}
	levels := []slog.Level{slog.LevelInfo, slog.LevelDebug, slog.LevelWarn + 1, slog.LevelError, LevelTrace, LevelFatal, 100, -100}
	for repName, rep := range replacers {
		for chainName, chain := range chains {
			for _, f := range []Format{JSON, Text} {
				for i, addSource := range []bool{false, true} {
					for _, recPC := range []uintptr{0, pc} {
						for _, as := range [][]slog.Attr{attrs, nil, {{}}, {slog.Group("g", slog.Attr{})}} {
							r := record(times[i%len(times)], levels[(len(as)+i)%len(levels)], "matrix msg", recPC, as)
							want := reference(t, f, addSource, rep, chain, r)
							got := ours(f, addSource, rep, chain, r, true)
							requireSame(t, want, got, fmt.Sprintf("rep=%s chain=%s format=%d source=%v pc=%v nattrs=%d", repName, chainName, f, addSource, recPC != 0, len(as)))
						}
					}
				}
			}
		}
	}
	// Times and levels on their own.
	for _, tm := range times {
		for _, l := range levels {
			for _, f := range []Format{JSON, Text} {
				for _, repName := range []string{"nil", "identity"} {
					r := record(tm, l, "t", 0, []slog.Attr{slog.Time("at", tm)})
					want := reference(t, f, false, replacers[repName], nil, r)
					got := ours(f, false, replacers[repName], nil, r, true)
					requireSame(t, want, got, fmt.Sprintf("time=%v level=%v rep=%s", tm, l, repName))
				}
			}
		}
	}
}

func TestIdentityBigString(t *testing.T) {
	attrs := kindCases()["attr/big"]
	msg := strings.Repeat("m\xff\u2028 ", 100000)
	for _, f := range []Format{JSON, Text} {
		r := record(fixedTime, slog.LevelInfo, msg, 0, attrs)
		requireSame(t, reference(t, f, false, nil, nil, r), ours(f, false, nil, nil, r, true), "big")
	}
}

func TestIdentityMessages(t *testing.T) {
	for _, a := range valueAttrs() {
		if a.Value.Kind() != slog.KindString || a.Key == "big" {
			continue
		}
		for _, f := range []Format{JSON, Text} {
			r := record(fixedTime, slog.LevelInfo, a.Value.String(), 0, nil)
			requireSame(t, reference(t, f, false, nil, nil, r), ours(f, false, nil, nil, r, true), "msg "+a.Key)
		}
	}
}

// TestTraceFatalNames checks the one deliberate difference from slog.
func TestTraceFatalNames(t *testing.T) {
	names := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey {
			switch a.Value.Any().(slog.Level) {
			case LevelTrace:
				return slog.String(a.Key, "TRACE")
			case LevelFatal:
				return slog.String(a.Key, "FATAL")
			}
		}
		return a
	}
	for _, l := range []slog.Level{LevelTrace, LevelFatal, slog.LevelInfo, LevelTrace + 1} {
		for _, f := range []Format{JSON, Text} {
			r := record(fixedTime, l, "m", 0, []slog.Attr{slog.Any("lv", l)})
			want := reference(t, f, false, names, nil, r)
			requireSame(t, want, ours(f, false, nil, nil, r, false), "fast path")
			requireSame(t, want, ours(f, false, replacers["identity"], nil, r, false), "ReplaceAttr path")
		}
	}
}

// TestNamedAndExtra checks that the logger name and extra attributes land
// at the top level right after the message: exactly where slog puts
// attributes given to WithAttrs before any other derivation.
func TestNamedAndExtra(t *testing.T) {
	extra := []slog.Attr{slog.String("trace_id", "abc"), slog.String("span id", "d e"), slog.Group("eg", slog.Int("x", 1)), {}}
	for chainName, chain := range chains {
		for repName, rep := range replacers {
			for _, f := range []Format{JSON, Text} {
				for _, key := range []string{"", "component"} {
					r := record(fixedTime, slog.LevelWarn, "named", 0, []slog.Attr{slog.Int("n", 1), slog.Group("rg", slog.String("s", "v"))})
					wantKey := key
					if wantKey == "" {
						wantKey = "logger"
					}
					refChain := []step{{attrs: []slog.Attr{slog.String(wantKey, "my svc")}}}
					for _, a := range extra {
						refChain = append(refChain, step{attrs: []slog.Attr{a}})
					}
					refChain = append(refChain, chain...)
					want := reference(t, f, false, rep, refChain, r)

					e := New(Options{Format: f, ReplaceAttr: rep, LoggerKey: key, SlogLevelNames: true}).Named("first")
					for _, s := range chain {
						if s.group != "" {
							e = e.WithGroup(s.group)
						} else {
							e = e.WithAttrs(s.attrs)
						}
					}
					e = e.Named("my svc")
					requireSame(t, want, string(e.Append(nil, r, extra)), fmt.Sprintf("chain=%s rep=%s", chainName, repName))

					// Named("") removes the name; no extras leaves only the chain.
					want = reference(t, f, false, rep, chain, r)
					requireSame(t, want, string(e.Named("").Append(nil, r, nil)), fmt.Sprintf("unnamed chain=%s rep=%s", chainName, repName))
				}
			}
		}
	}
}

func TestDerivationSemantics(t *testing.T) {
	e := New(Options{})
	require.Same(t, e, e.WithAttrs(nil))
	require.Same(t, e, e.WithAttrs([]slog.Attr{}))
	require.Same(t, e, e.WithGroup(""))
	require.Same(t, e, e.WithAttrs([]slog.Attr{slog.Group("empty")}))
	// Derived encoders never share mutable state.
	base := e.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)})
	x := base.WithAttrs([]slog.Attr{slog.Int("x", 1)})
	y := base.WithAttrs([]slog.Attr{slog.Int("y", 2)})
	r := record(time.Time{}, slog.LevelInfo, "m", 0, nil)
	require.Equal(t, `{"level":"INFO","msg":"m","g":{"a":1,"x":1}}`+"\n", string(x.Append(nil, r, nil)))
	require.Equal(t, `{"level":"INFO","msg":"m","g":{"a":1,"y":2}}`+"\n", string(y.Append(nil, r, nil)))
}

func TestDropMarker(t *testing.T) {
	for _, f := range []Format{JSON, Text} {
		e := New(Options{Format: f}).Named("n").WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)})
		r := record(fixedTime, slog.LevelWarn, DropMessage, 0, []slog.Attr{slog.Uint64("dropped", 17)})
		requireSame(t, reference(t, f, false, nil, nil, r), string(e.AppendDropMarker(nil, fixedTime, 17)), "drop marker")
	}
}

// TestZoneOffsetsAsSlog: time.FixedZone takes any offset; one of 100 hours
// or more has a three-digit hour ("+100:05"), which the cached per-second
// stamp cannot hold. The record time and time attributes must still be
// written as slog writes them, through both paths, in JSON and Text, and
// the zap and Console formats must write the offset as package time does.
func TestZoneOffsetsAsSlog(t *testing.T) {
	const h = 3600
	for _, offset := range []int{0, 30, -30, 99*h + 59*60, -(99*h + 59*60 + 59), 100 * h, -100 * h, 100*h + 5*60, -(100*h + 5*60), 1000*h + 1, 24 * 1000 * h} {
		tm := time.Date(2024, 5, 17, 10, 30, 45, 120_000_000, time.FixedZone("z", offset))
		r := record(tm, slog.LevelInfo, "m", 0, []slog.Attr{slog.Time("at", tm), slog.Group("g", slog.Time("at", tm.Add(time.Second)))})
		for _, f := range []Format{JSON, Text} {
			for _, rep := range []string{"nil", "identity"} {
				want := reference(t, f, false, replacers[rep], nil, r)
				require.Equal(t, want, ours(f, false, replacers[rep], nil, r, true), "offset %d, format %d, rep %s", offset, f, rep)
			}
		}
		for zt, layout := range map[ZapTime]string{
			ZapTimeRFC3339:     time.RFC3339,
			ZapTimeRFC3339Nano: time.RFC3339Nano,
			ZapTimeISO8601:     "2006-01-02T15:04:05.000Z0700",
		} {
			want := `"ts":"` + tm.Format(layout) + `"`
			assert.Contains(t, string(New(Options{Format: ZapJSON.WithZapTime(zt)}).Append(nil, r, nil)), want, "offset %d, zap time %d", offset, zt)
		}
		assert.Contains(t, string(New(Options{Format: Console}).Append(nil, r, nil)), "10:30:45.120 ", "offset %d", offset)
	}
}
