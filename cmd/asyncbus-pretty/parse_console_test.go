package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of parse_console.go: the corners of asyncbus's Console and of
// zap's console encoding. (Every level of both, as asyncbus writes them:
// TestParseOwnFormats; zap's own: the peers' lines.)

// clockTime is testTime's clock on today's date, local time: what a
// Console line's clock reads as.
func clockTime(t *testing.T, line string) string {
	t.Helper()
	got, ok := parseForTest(line)
	require.True(t, ok, line)
	return got.time.Format("15:04:05.000")
}

func TestParseConsole(t *testing.T) {
	src := "app/main.go:12"
	runParseCases(t, withoutTimes([]parseCase{
		{"full", `12:34:56.789 INFO  app/main.go:12 hello world k="v w" n=1`,
			&parsed{level: "INFO", msg: "hello world", source: src, attrs: []string{"k=v w", "n=1"}}},
		{"no source", `12:34:56.789 WARN  disk full`, &parsed{level: "WARN", msg: "disk full"}},
		{"offset level", `12:34:56.789 ERROR+2 app/main.go:12 m`, &parsed{level: "ERROR+2", msg: "m", source: src}},
		{"no message", `12:34:56.789 DEBUG k=v`, &parsed{level: "DEBUG", attrs: []string{"k=v"}}},
		{"quoted message", `12:34:56.789 INFO  "a\tb" k=v`, &parsed{level: "INFO", msg: "a\tb", attrs: []string{"k=v"}}},
		{"raw message with quotes", `12:34:56.789 INFO  say "hi there" now k=v`,
			&parsed{level: "INFO", msg: `say "hi there" now`, attrs: []string{"k=v"}}},
		{"pairs inside the message stay in it", `12:34:56.789 INFO  GET /x?a=b done n=1`,
			&parsed{level: "INFO", msg: "GET /x?a=b done", attrs: []string{"n=1"}}},
		{"logger attribute", `12:34:56.789 INFO  m logger=db`, &parsed{level: "INFO", msg: "m", logger: "db"}},
		{"not a level", `12:34:56.789 HELLO m`, nil},
		{"not a clock", `12:34:56 INFO m`, nil},
		{"text starting with a clock-like key", `12:30=x msg=m`, &parsed{msg: "m", attrs: []string{"12:30=x"}}},
	}))
	assert.Equal(t, "12:34:56.789", clockTime(t, "12:34:56.789 INFO  m"))
}

// withoutTimes drops the expected time: Console clocks are on today's
// date, checked by clockTime.
func withoutTimes(cases []parseCase) []parseCase {
	for i := range cases {
		if cases[i].want != nil && strings.HasPrefix(cases[i].line, "12:34") {
			p := *cases[i].want
			got, _ := parseForTest(cases[i].line)
			p.time = got.time
			cases[i].want = &p
		}
	}
	return cases
}

// TestParseConsoleColour: a coloured Console line, as asyncbus writes it
// with Options.Color, reads as the plain one.
func TestParseConsoleColour(t *testing.T) {
	r := slog.NewRecord(testTime, slog.LevelWarn, "hello world", ownPC)
	r.AddAttrs(slog.String("k", "v w"), slog.Group("g", slog.Int("n", 1)))
	plain := encode.New(encode.Options{Format: encode.Console, AddSource: true})
	colour := encode.New(encode.Options{Format: encode.Console, AddSource: true, Color: true})
	pl := strings.TrimSuffix(string(plain.Append(nil, r, nil)), "\n")
	cl := strings.TrimSuffix(string(colour.Append(nil, r, nil)), "\n")
	require.Contains(t, cl, "\x1b[")
	want, ok := parseForTest(pl)
	require.True(t, ok)
	got, ok := parseForTest(cl)
	require.True(t, ok, cl)
	assert.Equal(t, want, got)
	assert.Equal(t, "a\x1bb", stripColor("a\x1bb"), "a lone ESC is kept")
	assert.Equal(t, "a\x1b[xb", stripColor("a\x1b[xb"), "not a colour")
	assert.Equal(t, "ab", stripColor("a\x1b[1;31mb"))
}

func TestParseZapConsole(t *testing.T) {
	src := "app/main.go:12"
	runParseCases(t, []parseCase{
		{"full", "2026-12-01T12:34:56.789Z\tINFO\tapi\tapp/main.go:12\thello world\t{\"k\": \"v w\", \"g\": {\"n\": 1}}",
			&parsed{time: utcTime("2026-12-01T12:34:56.789Z"), level: "INFO", msg: "hello world", logger: "api", source: src, attrs: []string{"k=v w", "g.n=1"}}},
		{"no time, logger or fields", "WARN\tapp/main.go:12\tm", &parsed{level: "WARN", msg: "m", source: src}},
		{"function column", "INFO\tapp/main.go:12\tmain.run\tm", &parsed{level: "INFO", msg: "m", source: src}},
		{"logger without caller", "INFO\tapi\tm", &parsed{level: "INFO", msg: "m", logger: "api"}},
		{"empty fields", "INFO\tm\t{}", &parsed{level: "INFO", msg: "m"}},
		{"numeric level", "LEVEL(-2)\tm", &parsed{level: "DEBUG+2", msg: "m"}},
		{"dpanic kept", "DPANIC\tm", &parsed{level: "ERROR", msg: "m", attrs: []string{"level=DPANIC"}}},
		{"epoch time", "1.7961284965e+09\tINFO\tm", &parsed{time: utcTime("2026-12-01T12:34:56.5Z"), level: "INFO", msg: "m"}},
		{"stack frame", "\t/src/app/main.go:42", nil},
		{"not a level", "2026-12-01T12:34:56.789Z\tHELLO\tm", nil},
		{"bad fields", "INFO\tm\t{\"k\": }", nil},
		{"too many columns", "INFO\ta\tb\tc\td\tm", nil},
	})
}

func TestParseZapConsolePeers(t *testing.T) {
	src := func(line string) string { return "pretty/peers_more_test.go:" + line }
	runPeerCases(t, "dev-zap console", map[string]*parsed{
		"dev-zap console info":   {time: peerTime, level: "INFO", logger: "api", source: src("40"), msg: "request served", attrs: []string{"path=/v1/items", "status=200", "took=1.5s"}},
		"dev-zap console debug":  {time: peerTime, level: "DEBUG", logger: "api", source: src("41"), msg: "cache lookup", attrs: []string{`keys=["a", "b"]`, "req.id=r-1"}},
		"dev-zap console warn":   {time: peerTime, level: "WARN", logger: "api", source: src("42"), msg: "slow"},
		"dev-zap console error":  {time: peerTime, level: "ERROR", logger: "api", source: src("43"), msg: "write failed", attrs: []string{"error=disk full"}},
		"dev-zap console dpanic": {time: peerTime, level: "ERROR", logger: "api", source: src("44"), msg: "invariant broken", attrs: []string{"level=DPANIC"}},
		"dev-zap console plain":  {time: peerTime, level: "INFO", source: src("45"), msg: "no name, no fields"},
		"dev-zap console V(2)":   {time: peerTime, level: "DEBUG+2", source: src("46"), msg: "verbose", attrs: []string{"n=2"}},
	})
}
