package main

import (
	"log/slog"
	"os"
	"path"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/encode"
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
		got.level = levelString(r.level)
	}
	if r.source.File != "" {
		got.source = r.source.File + ":" + itoa(r.source.Line)
	}
	return got, true
}

// levelString names l as the Console format does.
func levelString(l slog.Level) string {
	switch l {
	case levelTrace:
		return "TRACE"
	case levelFatal:
		return "FATAL"
	}
	return l.String()
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
		{"colour codes only", "\x1b[0m\x1b[1;31m", nil},
		{"coloured text", "\x1b[2mmsg=\x1b[0mm", &parsed{msg: "m"}},
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

// ownFormat is one of asyncbus's formats and what its lines say when read
// back: the level it writes for each slog level, the source's form and
// the time's precision.
type ownFormat struct {
	name  string
	f     encode.Format
	level func(slog.Level) slog.Level
	short bool          // the source is "dir/file.go:N", not the full path
	clock bool          // the time is a clock only (Console)
	trunc time.Duration // the time is written truncated to this
	slack time.Duration // the time is written as a float, read back within this
}

func exactLevel(l slog.Level) slog.Level { return l }

// gcpLevel is the level a GCPJSON severity names.
func gcpLevel(l slog.Level) slog.Level {
	switch {
	case l < slog.LevelInfo:
		return slog.LevelDebug
	case l < slog.LevelWarn:
		return slog.LevelInfo
	case l < slog.LevelError:
		return slog.LevelWarn
	case l < levelFatal:
		return slog.LevelError
	}
	return levelFatal
}

// zapLevel is the level a zap format's level names, read back: by default
// zapslog's names (everything below Info is "debug", DEBUG); with
// logrLevels zapr's ("debug" is V(1), slog level -1, read as DEBUG;
// "Level(-2)" is slog level -2); with zapLevels, dpanic is shown as ERROR
// and panic as FATAL.
func zapLevel(zapLevels, logrLevels bool) func(slog.Level) slog.Level {
	return func(l slog.Level) slog.Level {
		switch {
		case l >= levelFatal:
			return levelFatal
		case zapLevels && l > slog.LevelError+1:
			return levelFatal
		case l >= slog.LevelError:
			return slog.LevelError
		case l >= slog.LevelWarn:
			return slog.LevelWarn
		case l >= slog.LevelInfo:
			return slog.LevelInfo
		case !logrLevels, l == -1:
			return slog.LevelDebug
		}
		return l
	}
}

// ownFormats are all of asyncbus's formats, each zap format with every
// time encoding.
func ownFormats() []ownFormat {
	fs := []ownFormat{
		{name: "JSON", f: encode.JSON, level: exactLevel},
		{name: "Text", f: encode.Text, level: exactLevel},
		{name: "Logfmt", f: encode.Logfmt, level: exactLevel},
		{name: "Console", f: encode.Console, level: exactLevel, short: true, clock: true},
		{name: "GCPJSON", f: encode.GCPJSON, level: gcpLevel},
		{name: "ECSJSON", f: encode.ECSJSON, level: exactLevel},
		{name: "DatadogJSON", f: encode.DatadogJSON, level: exactLevel},
	}
	for _, z := range []struct {
		name  string
		t     encode.ZapTime
		trunc time.Duration
		slack time.Duration
	}{
		{"RFC3339", encode.ZapTimeRFC3339, time.Second, 0},
		{"RFC3339Nano", encode.ZapTimeRFC3339Nano, 0, 0},
		{"ISO8601", encode.ZapTimeISO8601, time.Millisecond, 0},
		{"Epoch", encode.ZapTimeEpoch, 0, time.Microsecond},
		{"Millis", encode.ZapTimeMillis, 0, time.Microsecond},
		{"Nanos", encode.ZapTimeNanos, 0, 0},
	} {
		for _, base := range []encode.Format{encode.ZapJSON, encode.ZapConsole} {
			name := map[encode.Format]string{encode.ZapJSON: "ZapJSON", encode.ZapConsole: "ZapConsole"}[base]
			f := base.WithZapTime(z.t)
			fs = append(fs,
				ownFormat{name: name + " " + z.name, f: f, level: zapLevel(false, false), short: true, trunc: z.trunc, slack: z.slack},
				ownFormat{name: name + " " + z.name + " zap levels", f: f.WithZapLevels(), level: zapLevel(true, false), short: true, trunc: z.trunc, slack: z.slack},
				ownFormat{name: name + " " + z.name + " logr levels", f: f.WithLogrLevels(), level: zapLevel(false, true), short: true, trunc: z.trunc, slack: z.slack})
		}
	}
	return fs
}

// ownLevels are the levels each format writes in the tests: every name
// and offsets between them.
var ownLevels = []slog.Level{-9, levelTrace, -5, slog.LevelDebug, -2, -1, slog.LevelInfo, 2, slog.LevelWarn, 6,
	slog.LevelError, 9, 10, 11, levelFatal, 13}

// ownLine is the line format f writes for a record at level l with
// source, the logger name "api" and two attributes.
func ownLine(f ownFormat, l slog.Level) string {
	r := slog.NewRecord(testTime, l, "hello world", ownPC)
	r.AddAttrs(slog.String("k", "v w"), slog.Int("n", 1))
	enc := encode.New(encode.Options{Format: f.f, AddSource: true}).Named("api")
	return strings.TrimSuffix(string(enc.Append(nil, r, nil)), "\n")
}

// TestParseOwnFormats reads a line of every asyncbus format at every
// level: time, level, message, logger, source and attributes.
func TestParseOwnFormats(t *testing.T) {
	for _, f := range ownFormats() {
		t.Run(f.name, func(t *testing.T) {
			for _, l := range ownLevels {
				line := ownLine(f, l)
				got, ok := parseForTest(line)
				require.True(t, ok, "a record: %q", line)
				assert.Equal(t, levelString(f.level(l)), got.level, "level of %q", line)
				assert.Equal(t, "hello world", got.msg, line)
				assert.Equal(t, "api", got.logger, line)
				assert.Equal(t, ownSource(f.short), got.source, line)
				assert.Subset(t, got.attrs, []string{"k=v w", "n=1"}, line)
				if f.clock {
					assert.Equal(t, testTime.Format("15:04:05.000"), got.time.Format("15:04:05.000"), line)
				} else {
					assert.WithinDuration(t, testTime.Truncate(f.trunc), got.time, f.slack, line)
				}
			}
		})
	}
}

// ownPC is the source of ownLine's records.
var ownPC = here()

// ownSource is the source ownLine's records carry, as a line shows it:
// the full path, or the short form of Console and the zap formats.
func ownSource(short bool) string {
	fr, _ := runtime.CallersFrames([]uintptr{ownPC}).Next()
	file := fr.File
	if short {
		file = path.Base(path.Dir(file)) + "/" + path.Base(file)
	}
	return file + ":" + itoa(fr.Line)
}
