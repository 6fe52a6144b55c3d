package main

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of parse.go and the helpers the per-format tests share.

// parsed is what a test expects of a parsed line.
type parsed struct {
	time   time.Time // zero: none
	level  string    // "": none
	msg    string
	source string   // "file:line", "": none
	logger string   // "": none
	attrs  []string // flattened "key=value", groups dotted
}

// parseForTest parses line with times in UTC.
func parseForTest(line string) (parsed, bool) {
	p := &parser{utc: true}
	var r record
	r.vIndex = -1
	if !p.parse(&r, line) {
		return parsed{}, false
	}
	got := parsed{time: r.time, msg: r.msg, logger: r.logger, attrs: flatten(r.attrs, "")}
	if r.hasLevel {
		got.level = r.level.String()
		switch r.level {
		case levelTrace:
			got.level = "TRACE"
		case levelFatal:
			got.level = "FATAL"
		}
	}
	if r.source.File != "" {
		got.source = r.source.File + ":" + itoa(r.source.Line)
	}
	return got, true
}

func itoa(n int) string { return slog.IntValue(n).String() }

func flatten(attrs []slog.Attr, prefix string) []string {
	var out []string
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindGroup {
			out = append(out, flatten(a.Value.Group(), prefix+a.Key+".")...)
			continue
		}
		out = append(out, prefix+a.Key+"="+a.Value.String())
	}
	return out
}

// parseCase is one line and what it parses to (nil: not a record).
type parseCase struct {
	name string
	line string
	want *parsed
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseForTest(tc.line)
			if tc.want == nil {
				assert.False(t, ok, "not a record: %q", tc.line)
				return
			}
			require.True(t, ok, "a record: %q", tc.line)
			assert.Equal(t, *tc.want, got)
		})
	}
}

func TestParseDispatch(t *testing.T) {
	runParseCases(t, []parseCase{
		{"empty", "", nil},
		{"spaces", "   \t", nil},
		{"CRLF JSON", "{\"msg\":\"m\"}\r", &parsed{msg: "m"}},
		{"CRLF text", "msg=m\r", &parsed{msg: "m"}},
		{"indented JSON", "  {\"msg\":\"m\"}", &parsed{msg: "m"}},
		{"text starting like klog", "Info=1 msg=m", &parsed{msg: "m", attrs: []string{"Info=1"}}},
		{"neither msg nor level", `{"time":"2026-01-02T03:04:05Z","a":1}`, nil},
		{"level only", "level=warn", &parsed{level: "WARN"}},
		{"invalid UTF-8", "msg=\"a\xffb\" k=\xfe", &parsed{msg: "a\uFFFDb", attrs: []string{"k=\uFFFD"}}},
	})
}

// utcTime is a shorthand for expected times.
func utcTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// peerLines reads testdata/peers.txt, the lines zap, zapr, zerolog and
// klog wrote in benchmarks/pretty (which checks the file against them).
func peerLines(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/peers.txt")
	require.NoError(t, err)
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		name, text, ok := strings.Cut(l, "\t")
		require.True(t, ok, l)
		m[name] = text
	}
	return m
}

// runPeerCases checks each named peer line; every line of the file whose
// name starts with prefix must have a case.
func runPeerCases(t *testing.T, prefix string, want map[string]*parsed) {
	t.Helper()
	peers := peerLines(t)
	var cases []parseCase
	for name, line := range peers {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		w, ok := want[name]
		require.True(t, ok, "no expectation for %q", name)
		cases = append(cases, parseCase{name, line, w})
	}
	require.Len(t, cases, len(want), "every expectation has a line")
	runParseCases(t, cases)
}
