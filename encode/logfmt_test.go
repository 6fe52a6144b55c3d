package encode

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-logfmt/logfmt"
	"github.com/stretchr/testify/require"
)

type kv struct{ k, v string }

// decodeLogfmt decodes one logfmt line with the go-logfmt decoder.
func decodeLogfmt(t testing.TB, line []byte) []kv {
	t.Helper()
	require.True(t, bytes.HasSuffix(line, []byte("\n")), "line must end in a newline")
	require.Equal(t, 1, bytes.Count(line, []byte("\n")), "exactly one line")
	d := logfmt.NewDecoderSize(bytes.NewReader(line), len(line)+1)
	var out []kv
	for d.ScanRecord() {
		for d.ScanKeyval() {
			out = append(out, kv{string(d.Key()), string(d.Value())})
		}
	}
	require.NoError(t, d.Err(), "logfmt decode of %q", line)
	return out
}

// parseSlogText splits a line of slog's TextHandler into its pairs.
func parseSlogText(t testing.TB, line string) []kv {
	t.Helper()
	line = strings.TrimLeft(strings.TrimSuffix(line, "\n"), " ")
	var out []kv
	token := func(stop byte) string {
		if strings.HasPrefix(line, `"`) {
			q, err := strconv.QuotedPrefix(line)
			require.NoError(t, err)
			line = line[len(q):]
			u, err := strconv.Unquote(q)
			require.NoError(t, err)
			return u
		}
		i := strings.IndexByte(line, stop)
		if i < 0 {
			i = len(line)
		}
		tok := line[:i]
		line = line[i:]
		return tok
	}
	for line != "" {
		k := token('=')
		require.True(t, strings.HasPrefix(line, "="), "missing '=' after %q", k)
		line = line[1:]
		v := token(' ')
		out = append(out, kv{k, v})
		// slog writes two spaces where a group wrote nothing but counts as
		// written (its members are LogValuers that resolve to empty
		// groups): closing it sets the separator. A bare key never starts
		// with a space (it would be quoted).
		line = strings.TrimLeft(line, " ")
	}
	return out
}

// sanitizeKey is an independent statement of the documented key rule.
func sanitizeKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); {
		r, size := utf8.DecodeRuneInString(k[i:])
		switch {
		case r < utf8.RuneSelf && (r <= ' ' || r == '=' || r == '"' || r == 0x7f):
			b.WriteByte('_')
		case r == utf8.RuneError || (r >= utf8.RuneSelf && (unicode.IsSpace(r) || !unicode.IsPrint(r))):
			b.WriteByte('_')
		default:
			b.WriteString(k[i : i+size])
		}
		i += size
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// fixUTF8 replaces every invalid byte with U+FFFD, as JSON escaping does.
func fixUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

var levelName = regexp.MustCompile(`^(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([+-][0-9]+)?$`)

// expectedLogfmt derives the pairs a logfmt line must decode to from the
// (slog-identical) Text encoding of the same record.
func expectedLogfmt(t testing.TB, text string) []kv {
	pairs := parseSlogText(t, text)
	for i, p := range pairs {
		switch {
		case i == 0 && p.k == slog.TimeKey:
			p.k = "ts"
		case i <= 1 && levelName.MatchString(p.v):
			p.v = strings.ToLower(p.v)
		}
		p.k = sanitizeKey(p.k)
		p.v = fixUTF8(p.v)
		pairs[i] = p
	}
	return pairs
}

func TestLogfmtRoundTrip(t *testing.T) {
	pc := callerPC()
	for name, attrs := range kindCases() {
		for chainName, chain := range chains {
			for _, l := range []slog.Level{slog.LevelInfo, LevelTrace, LevelFatal, slog.LevelWarn + 2} {
				if name == "attr/big" && (chainName != "none" || l != slog.LevelInfo) {
					continue // one round trip of the multi-megabyte value is enough
				}
				if name == "all" {
					attrs = withoutBig(attrs)
				}
				r := record(fixedTime, l, "round trip \"msg\"", pc, attrs)
				text := ours(Text, true, nil, chain, r, false)
				got := decodeLogfmt(t, []byte(ours(Logfmt, true, nil, chain, r, false)))
				require.Equal(t, expectedLogfmt(t, text), got, "case %s chain %s", name, chainName)
			}
		}
	}
}

func TestLogfmtReplaceAttr(t *testing.T) {
	r := record(fixedTime, slog.LevelInfo, "m", 0, []slog.Attr{slog.Int("a", 1)})
	for name, rep := range replacers {
		e := New(Options{Format: Logfmt, ReplaceAttr: rep}).WithGroup("g")
		line := e.Append(nil, r, []slog.Attr{slog.String("x y", "v")})
		pairs := decodeLogfmt(t, line)
		text := string(New(Options{Format: Text, ReplaceAttr: rep}).WithGroup("g").Append(nil, r, []slog.Attr{slog.String("x y", "v")}))
		require.Equal(t, expectedLogfmt(t, text), pairs, name)
	}
}

func TestLogfmtExamples(t *testing.T) {
	e := New(Options{Format: Logfmt}).Named("db").WithGroup("q")
	r := record(fixedTime, slog.LevelWarn, "slow query", 0, []slog.Attr{
		slog.String("sql", "select 1"), slog.String("k=\"x\" y", ""), slog.Duration("took", 1500e6), slog.String("", "e"),
	})
	require.Equal(t,
		`ts=2024-05-17T10:30:45.123Z level=warn msg="slow query" logger=db q.sql="select 1" q.k__x__y="" q.took=1.5s q.=e`+"\n",
		string(e.Append(nil, r, nil)))
	require.Equal(t, []kv{{"_", "v"}}, decodeLogfmt(t, New(Options{Format: Logfmt, ReplaceAttr: replacers["drop-builtins"]}).Append(nil, record(fixedTime, 0, "", 0, []slog.Attr{slog.String("", "v")}), nil)))
	marker := decodeLogfmt(t, e.AppendDropMarker(nil, fixedTime, 9))
	require.Equal(t, []kv{{"ts", "2024-05-17T10:30:45.123Z"}, {"level", "warn"}, {"msg", DropMessage}, {"dropped", "9"}}, marker)
	require.Equal(t, fmt.Sprint(len(marker)), "4")
}

// TestLogfmtInvalidUTF8 pins logfmt's escaping of invalid UTF-8 to the
// escape \ufffd on every Go release (slog's JSON writes the raw rune from
// Go 1.27; logfmt is this package's own format and does not follow it).
func TestLogfmtInvalidUTF8(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"one bad byte", "a\xffb", `v="a\ufffdb"`},
		{"cut rune", "x \xe2\x82", `v="x \ufffd\ufffd"`},
		{"the rune itself stays raw", "a\ufffd b", "v=\"a\ufffd b\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := string(New(Options{Format: Logfmt}).Append(nil, record(time.Time{}, slog.LevelInfo, "m", 0, []slog.Attr{slog.String("v", tt.value)}), nil))
			require.Equal(t, "level=info msg=m "+tt.want+"\n", line)
		})
	}
}
