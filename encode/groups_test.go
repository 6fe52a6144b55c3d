package encode

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOuterGroupPrefixKept: A WithAttrs after WithGroup
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

// TestEmptyGroupLeavesNothingBehind: a group that turns out empty (its
// attributes all empty, or all removed by ReplaceAttr) is taken back whole,
// separator, key prefix and ReplaceAttr group path included, in every
// format, on the record, WithAttrs and built-in paths. slog keeps all three
// for the attributes that follow (golang/go#62152: JSON without its ',';
// Text keys under the empty group's name; later attributes seen by
// ReplaceAttr inside the group); this is the one deliberate difference from
// slog (README), checked here against slog's own output.
func TestEmptyGroupLeavesNothingBehind(t *testing.T) {
	dropInGroups := func(gs []string, a slog.Attr) slog.Attr {
		if len(gs) > 0 {
			return slog.Attr{}
		}
		return a
	}
	dropK := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "k" {
			return slog.Attr{}
		}
		return a
	}
	dropSourceFields := func(gs []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case "function", "file", "line":
			return slog.Attr{}
		}
		return a
	}
	const head = `{"time":"2024-05-17T10:30:45.123456789Z","level":"INFO","msg":"m"`
	const textHead = "time=2024-05-17T10:30:45.123Z level=INFO msg=m"
	cases := []struct {
		name       string
		rep        func([]string, slog.Attr) slog.Attr
		source     bool
		chain      []step
		attrs      []slog.Attr
		json, text string // ours, after the header
		slogJSON   string // slog's, after the header
		slogText   string
		logfmtKeys []string // ours, after ts, level and msg
	}{
		{
			name:  "empty attr in a group",
			attrs: []slog.Attr{slog.Group("g", slog.Attr{}), slog.Int("a", 1)},
			json:  `,"a":1}`, slogJSON: `"a":1}`,
			text: ` a=1`, slogText: ` g.a=1`,
			logfmtKeys: []string{"a"},
		},
		{
			name:  "after another attribute",
			attrs: []slog.Attr{slog.Int("z", 0), slog.Group("g", slog.Attr{}), slog.Int("a", 1)},
			json:  `,"z":0,"a":1}`, slogJSON: `,"z":0"a":1}`,
			text: ` z=0 a=1`, slogText: ` z=0 g.a=1`,
			logfmtKeys: []string{"z", "a"},
		},
		{
			name:  "ReplaceAttr empties a group",
			rep:   dropInGroups,
			attrs: []slog.Attr{slog.Group("req", slog.String("auth", "x")), slog.Int("status", 200)},
			json:  `,"status":200}`, slogJSON: `}`,
			text: ` status=200`, slogText: ``,
			logfmtKeys: []string{"status"},
		},
		{
			name:  "nested in a group",
			rep:   dropK,
			attrs: []slog.Attr{slog.Group("outer", slog.Group("dot.ted", slog.Int("k", 1)), slog.Int("x", 2)), slog.Int("y", 3)},
			json:  `,"outer":{"x":2},"y":3}`, slogJSON: `,"outer":{"x":2},"y":3}`,
			text: ` outer.x=2 y=3`, slogText: ` outer.dot.ted.x=2 outer.doy=3`,
			logfmtKeys: []string{"outer.x", "y"},
		},
		{
			name:  "nested, cutting a rune of the prefix",
			attrs: []slog.Attr{slog.Group("n", slog.Group("é", slog.Attr{}), slog.Int("x", 2)), slog.Int("y", 3)},
			json:  `,"n":{"x":2},"y":3}`, slogJSON: `,"n":{"x":2},"y":3}`,
			text: ` n.x=2 y=3`, slogText: ` n.é.x=2 "n.\xc3y"=3`,
			logfmtKeys: []string{"n.x", "y"},
		},
		{
			name:  "WithAttrs",
			chain: []step{{attrs: []slog.Attr{slog.Group("g", slog.Attr{}), slog.Int("a", 1)}}},
			attrs: []slog.Attr{slog.Int("b", 2)},
			json:  `,"a":1,"b":2}`, slogJSON: `,"a":1,"b":2}`,
			text: ` a=1 b=2`, slogText: ` g.a=1 g.b=2`,
			logfmtKeys: []string{"a", "b"},
		},
		{
			name:  "under WithGroup",
			chain: []step{{group: "w"}},
			attrs: []slog.Attr{slog.Group("g", slog.Attr{}), slog.Int("a", 1)},
			json:  `,"w":{"a":1}}`, slogJSON: `,"w":{"a":1}}`,
			text: ` w.a=1`, slogText: ` w.g.a=1`,
			logfmtKeys: []string{"w.a"},
		},
		{
			name:   "built-in source emptied by ReplaceAttr",
			rep:    dropSourceFields,
			source: true,
			attrs:  []slog.Attr{slog.Int("a", 1)},
			json:   `,"a":1}`, slogJSON: `,"a":1}`, // and "level":"INFO""msg" before
			text: ` a=1`, slogText: ` a=1`, // Text's source is a string: never a group
			logfmtKeys: []string{"a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := record(fixedTime, slog.LevelInfo, "m", callerPC(), tc.attrs)
			wantJSON, wantSlogJSON := head+tc.json+"\n", head+tc.slogJSON+"\n"
			wantText, wantSlogText := textHead+tc.text+"\n", textHead+tc.slogText+"\n"
			builtins := []string{"ts", "level", "msg"}
			if tc.source {
				// JSON: slog's source group, emptied, leaves no ',' before "msg".
				wantSlogJSON = strings.Replace(head, `"INFO",`, `"INFO"`, 1) + tc.slogJSON + "\n"
				// Text: the source is a string, never a group.
				src := r.Source()
				withSource := strings.Replace(textHead, " msg=", fmt.Sprintf(" source=%s:%d msg=", src.File, src.Line), 1)
				wantText, wantSlogText = withSource+tc.text+"\n", withSource+tc.slogText+"\n"
				builtins = []string{"ts", "level", "source", "msg"}
			}
			gotJSON := ours(JSON, tc.source, tc.rep, tc.chain, r, true)
			require.Equal(t, wantJSON, gotJSON)
			require.True(t, json.Valid([]byte(gotJSON)))
			require.Equal(t, wantText, ours(Text, tc.source, tc.rep, tc.chain, r, true))
			require.Equal(t, wantSlogJSON, slogOutput(t, JSON, tc.source, tc.rep, tc.chain, r), "slog's own JSON")
			require.Equal(t, wantSlogText, slogOutput(t, Text, tc.source, tc.rep, tc.chain, r), "slog's own Text")
			for _, f := range []Format{JSON, Text} {
				want, pruned := referenceFixed(t, f, tc.source, tc.rep, tc.chain, r)
				require.Equal(t, want, ours(f, tc.source, tc.rep, tc.chain, r, true), "the differential tests' model of slog without the bug")
				if f == JSON || !tc.source {
					require.Positive(t, pruned, "the model applies its exception")
				}
			}
			want := append(builtins, tc.logfmtKeys...)
			require.Equal(t, want, keys(decodeLogfmt(t, []byte(ours(Logfmt, tc.source, tc.rep, tc.chain, r, true)))), "logfmt keys")
			console := ours(Console, tc.source, tc.rep, tc.chain, r, true)
			require.True(t, strings.HasSuffix(console, tc.text+"\n"), "console %q", console)
		})
	}
}
