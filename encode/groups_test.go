package encode

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOuterGroupPrefixKept: issue 13 item 1. A WithAttrs after WithGroup
// used to lose the outer groups' key prefix (a.x=1 b.y=2) and leave stale
// bytes in later keys (userk=v) in Text, Logfmt and Console.
func TestOuterGroupPrefixKept(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Int("z", 3), slog.String("k", "v")})
	cases := []struct {
		chain []step
		text  string
	}{
		{
			[]step{{group: "a"}, {attrs: []slog.Attr{slog.Int("x", 1)}}, {group: "b"}, {attrs: []slog.Attr{slog.Int("y", 2)}}},
			"a.x=1 a.b.y=2 a.b.z=3 a.b.k=v",
		},
		{
			[]step{{group: "req"}, {attrs: []slog.Attr{slog.Int("id", 1)}}, {attrs: []slog.Attr{slog.Group("user", slog.String("name", "bob"))}}},
			"req.id=1 req.user.name=bob req.z=3 req.k=v",
		},
	}
	for _, tc := range cases {
		for _, rep := range []string{"nil", "identity"} {
			want := "time=2024-05-17T10:30:45.123Z level=INFO msg=m " + tc.text + "\n"
			require.Equal(t, want, reference(t, Text, false, replacers[rep], tc.chain, r), "slog itself")
			require.Equal(t, want, ours(Text, false, replacers[rep], tc.chain, r, true), "text, rep %s", rep)
			e := New(Options{Format: Logfmt, ReplaceAttr: replacers[rep]})
			c := New(Options{Format: Console, ReplaceAttr: replacers[rep]})
			for _, s := range tc.chain {
				if s.group != "" {
					e, c = e.WithGroup(s.group), c.WithGroup(s.group)
				} else {
					e, c = e.WithAttrs(s.attrs), c.WithAttrs(s.attrs)
				}
			}
			require.Equal(t, "ts=2024-05-17T10:30:45.123Z level=info msg=m "+tc.text+"\n", string(e.Append(nil, r, nil)), "logfmt, rep %s", rep)
			require.Equal(t, "10:30:45.123 INFO  m "+tc.text+"\n", string(c.Append(nil, r, nil)), "console, rep %s", rep)
		}
	}
}

// TestEmptyNestedGroupKeysAsSlog: a nested group that turns out empty (its
// attrs all removed by ReplaceAttr, or all empty) is never closed by slog,
// and closing the group around it cuts the outer name's length off the end
// of the key prefix; later keys keep what is left. Text must match.
func TestEmptyNestedGroupKeysAsSlog(t *testing.T) {
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "k" {
			return slog.Attr{}
		}
		return a
	}
	inner := slog.Group("outer", slog.Group("dot.ted", slog.Int("k", 1)), slog.Int("x", 2))
	empties := slog.Group("outer", slog.Group("name", slog.Attr{}), slog.Int("x", 2))
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{inner, slog.Int("y", 3)})
	r2 := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{empties, slog.Int("y", 3)})
	for _, f := range []Format{Text, JSON} {
		for _, chain := range [][]step{nil, {{group: "g"}}, {{group: "g"}, {attrs: []slog.Attr{empties}}}} {
			requireSame(t, reference(t, f, false, drop, chain, r), ours(f, false, drop, chain, r, true), "drop")
			requireSame(t, reference(t, f, false, nil, chain, r2), ours(f, false, nil, chain, r2, true), "empty attrs")
		}
	}
	require.Contains(t, ours(Text, false, drop, nil, r, true), " outer.dot.ted.x=2 outer.doy=3\n")
}

// TestLogfmtKeysAfterEmptyGroupStayValid: slog's arithmetic for an empty
// nested group (see TestEmptyNestedGroupKeysAsSlog) can cut a multi-byte
// rune of the key prefix in two; logfmt keys must still be valid and
// sanitized, on the general path and, through WithAttrs, the fast path.
func TestLogfmtKeysAfterEmptyGroupStayValid(t *testing.T) {
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "k" {
			return slog.Attr{}
		}
		return a
	}
	g := slog.Group("n", slog.Group("é", slog.Int("k", 1)), slog.Int("x", 2))
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{g, slog.Int("y", 3)})
	line := New(Options{Format: Logfmt, ReplaceAttr: drop}).Append(nil, r, nil)
	require.Equal(t, []kv{{"ts", "2024-05-17T10:30:45.123Z"}, {"level", "info"}, {"msg", "m"}, {"n.é.x", "2"}, {"n._y", "3"}}, decodeLogfmt(t, line))

	empty := slog.Group("n", slog.Group("é", slog.Attr{}), slog.Int("x", 2))
	e := New(Options{Format: Logfmt}).WithAttrs([]slog.Attr{empty})
	line = e.Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Int("y", 3)}), nil)
	require.Equal(t, []kv{{"ts", "2024-05-17T10:30:45.123Z"}, {"level", "info"}, {"msg", "m"}, {"n.é.x", "2"}, {"n._y", "3"}}, decodeLogfmt(t, line))
}
