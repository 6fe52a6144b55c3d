package encode

import (
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestConsoleReplaceAttrBuiltins: ReplaceAttr applies to
// the time, level, source and msg columns as in slog: removal drops the
// column, a value of the built-in's kind fills it, any other kind or a group
// is written as key=value in the column's place.
func TestConsoleReplaceAttrBuiltins(t *testing.T) {
	src := &slog.Source{Function: "main.f", File: "/home/dev/app/main.go", Line: 7}
	builtin := func(key string, f func(slog.Attr) slog.Attr) func([]string, slog.Attr) slog.Attr {
		return func(gs []string, a slog.Attr) slog.Attr {
			if len(gs) == 0 && a.Key == key {
				return f(a)
			}
			if a.Key == "src" { // stands in for the record's source position
				return slog.Any(slog.SourceKey, src)
			}
			return a
		}
	}
	drop := func(slog.Attr) slog.Attr { return slog.Attr{} }
	cases := []struct {
		name string
		rep  func([]string, slog.Attr) slog.Attr
		want string
	}{
		{"none", nil, "10:30:45.123 INFO  hello k=v"},
		{"identity", builtin("", nil), "10:30:45.123 INFO  hello k=v"},
		{"drop time", builtin(slog.TimeKey, drop), "INFO  hello k=v"},
		{"drop level", builtin(slog.LevelKey, drop), "10:30:45.123 hello k=v"},
		{"drop msg", builtin(slog.MessageKey, drop), "10:30:45.123 INFO k=v"},
		{"time in another zone", builtin(slog.TimeKey, func(a slog.Attr) slog.Attr { return slog.Time("ts", a.Value.Time().In(tzA)) }), "16:00:45.123 INFO  hello k=v"},
		{"time as int", builtin(slog.TimeKey, func(a slog.Attr) slog.Attr { return slog.Int64(a.Key, a.Value.Time().Unix()) }), "time=1715941845 INFO  hello k=v"},
		{"other level", builtin(slog.LevelKey, func(a slog.Attr) slog.Attr { return slog.Any("severity", a.Value.Any().(slog.Level)+4) }), "10:30:45.123 WARN  hello k=v"},
		{"level as string", builtin(slog.LevelKey, func(a slog.Attr) slog.Attr { return slog.String("severity", "info") }), "10:30:45.123 severity=info hello k=v"},
		{"msg replaced", builtin(slog.MessageKey, func(a slog.Attr) slog.Attr { return slog.String("message", "bye now") }), "10:30:45.123 INFO  bye now k=v"},
		{"msg as group", builtin(slog.MessageKey, func(a slog.Attr) slog.Attr { return slog.Group(a.Key, slog.Int("len", 5)) }), "10:30:45.123 INFO  msg.len=5 k=v"},
		{"source dropped", builtin(slog.SourceKey, drop), "10:30:45.123 INFO  hello k=v"},
		{"source replaced", builtin(slog.SourceKey, func(slog.Attr) slog.Attr { return slog.Any(slog.SourceKey, src) }), "10:30:45.123 INFO  app/main.go:7 hello k=v"},
		{"source as string", builtin(slog.SourceKey, func(slog.Attr) slog.Attr { return slog.String("at", "here") }), "10:30:45.123 INFO  at=here hello k=v"},
	}
	r := record(fixedTime, slog.LevelInfo, "hello", 0, []slog.Attr{slog.String("k", "v")})
	for _, tc := range cases {
		line := New(Options{Format: Console, AddSource: true, ReplaceAttr: tc.rep}).Append(nil, r, nil)
		require.Equal(t, tc.want+"\n", string(line), tc.name)
	}
}

// TestConsoleEscapesControlChars: DEL, which slog's
// TextHandler writes raw, is escaped in Console values, keys, group names,
// the message and the logger name; Text still matches slog.
func TestConsoleEscapesControlChars(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m\x7f", 0, []slog.Attr{
		slog.String("v", "a\x7fb"), slog.String("k\x7f", "x"), slog.Group("g\x7f", slog.String("in", "\x7f")),
		slog.Any("err", errString("e\x7f")), slog.Any("b", []byte("\x7f")), slog.String("c1", "\u0085\u009b"),
	})
	e := New(Options{Format: Console}).Named("n\x7f").WithGroup("h\x7f")
	line := string(e.Append(nil, r, nil))
	require.Equal(t, `10:30:45.123 INFO  "m\x7f" logger="n\x7f" "h\x7f.v"="a\x7fb" "h\x7f.k\x7f"=x "h\x7f.g\x7f.in"="\x7f" "h\x7f.err"="e\x7f" "h\x7f.b"="\x7f" "h\x7f.c1"="\u0085\u009b"`+"\n", line)
	assertTerminalSafe(t, line, false)
	require.Equal(t, reference(t, Text, false, nil, nil, r), ours(Text, false, nil, nil, r, true), "text stays slog's")
}

type errString string

func (e errString) Error() string { return string(e) }

// ansiSequences are the escape sequences the Console encoder writes itself.
var ansiSequences = strings.NewReplacer(ansiReset, "", ansiDim, "",
	"\x1b[90m", "", "\x1b[36m", "", "\x1b[32m", "", "\x1b[33m", "", "\x1b[31m", "", "\x1b[1;35m", "")

// assertTerminalSafe checks that line holds no C0 control byte but its final
// newline (and, with color, the encoder's own colour sequences), no DEL, no
// C1 control and no invalid UTF-8.
func assertTerminalSafe(t *testing.T, line string, color bool) {
	t.Helper()
	require.True(t, strings.HasSuffix(line, "\n"), "%q", line)
	body := line[:len(line)-1]
	if color {
		body = ansiSequences.Replace(body)
	}
	require.True(t, utf8.ValidString(body), "invalid UTF-8 in %q", line)
	for _, r := range body {
		require.False(t, r < 0x20 || (r >= 0x7f && r <= 0x9f), "control character %U in %q", r, line)
	}
}

// FuzzConsole: whatever the strings, a Console line reaches the terminal
// with no control character but its newline and its own colour sequences.
func FuzzConsole(f *testing.F) {
	f.Add("msg", "key", "value", "group", []byte("bytes"), false, false)
	f.Add("m\x7f", "k\x7f", "\x7f\x1b[2J", "g\x9b", []byte("\x7f\x80\xff"), true, true)
	f.Add("\u0085\u2028", "\xc2\x85", "\xc2\x9b31m", "\t", []byte{0x1b, 0x9b}, true, false)
	f.Fuzz(func(t *testing.T, msg, key, val, group string, raw []byte, color, useRep bool) {
		var rep func([]string, slog.Attr) slog.Attr
		if useRep {
			rep = func(gs []string, a slog.Attr) slog.Attr {
				switch {
				case len(gs) == 0 && a.Key == slog.SourceKey:
					return slog.Any(a.Key, &slog.Source{File: val + "/" + key, Line: 1})
				case len(gs) == 0 && a.Key == slog.LevelKey && len(val)%2 == 0:
					return slog.String(key, val)
				case len(gs) == 0 && a.Key == slog.TimeKey && len(val)%3 == 0:
					return slog.String(group, val)
				case a.Key == "lv":
					return slog.Any(val, valuer{slog.StringValue(key)})
				}
				return a
			}
		}
		e := New(Options{Format: Console, Color: color, AddSource: true, ReplaceAttr: rep}).Named(key).WithGroup(group).WithAttrs([]slog.Attr{slog.String(key, val)})
		r := record(fixedTime, slog.Level(len(msg)%20-10), msg, callerPC(), []slog.Attr{
			slog.String(key, val), slog.Any("b", raw), slog.Any("err", errString(val)), slog.Group(group, slog.String(key, val)),
			slog.Any("tm", textM{val}), slog.Any("p", point{Name: val}), slog.Int("lv", 1), slog.Any(key, namedBytes(raw)),
		})
		assertTerminalSafe(t, string(e.Append(nil, r, []slog.Attr{slog.String(group, string(raw))})), color)
	})
}
