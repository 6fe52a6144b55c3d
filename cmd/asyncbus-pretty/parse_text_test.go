package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
)

// Tests of parse_text.go: logr funcr's text as funcr writes it, and the
// key=value grammar's corners. (slog's and asyncbus's Text and Logfmt:
// print_test.go.)

func TestParseTextFuncr(t *testing.T) {
	var buf bytes.Buffer
	log := funcr.New(func(prefix, args string) { buf.WriteString(args + "\n") }, funcr.Options{Verbosity: 1})
	log.WithName("ctrl").Info("reconciled", "pod", "web 1", "n", 3)
	log.V(1).Info("detail")
	log.Error(errors.New("timeout"), "sync failed")
	got := lines(buf.String())
	require.Len(t, got, 3)
	runParseCases(t, []parseCase{
		{"info", got[0], &parsed{level: "INFO", msg: "reconciled", attrs: []string{"pod=web 1", "n=3"}}},
		{"V(1)", got[1], &parsed{level: "DEBUG+3", msg: "detail"}},
		{"error", got[2], &parsed{level: "ERROR", msg: "sync failed", attrs: []string{"error=timeout"}}},
	})
}

func TestParseTextGrammar(t *testing.T) {
	runParseCases(t, []parseCase{
		{"slog quoting", `time=2026-12-01T12:34:56.789Z level=INFO msg="a \"b\"\n" "odd key"=1 k=`, &parsed{
			time: utcTime("2026-12-01T12:34:56.789Z"), level: "INFO", msg: "a \"b\"\n", attrs: []string{"odd key=1", "k="}}},
		{"Go escapes", `msg="\x41\101\u00e9\U0001F600\a"`, &parsed{msg: "AAé\U0001F600\a"}},
		{"JSON escapes", `msg="\/\ud83d\ude00"`, &parsed{msg: "/\U0001F600"}},
		{"offset zone", `ts=2026-12-01T13:34:56.789+01:00 msg=m`, &parsed{time: utcTime("2026-12-01T12:34:56.789Z"), msg: "m"}},
		{"source", `msg=m source=/a/b/c.go:12`, &parsed{msg: "m", source: "/a/b/c.go:12"}},
		{"source without a line", `msg=m source=c.go`, &parsed{msg: "m", attrs: []string{"source=c.go"}}},
		{"extra spaces", `  msg=m   k=v  `, &parsed{msg: "m", attrs: []string{"k=v"}}},
		{"bare word", `msg=m word`, nil},
		{"space before =", `msg =m`, nil},
		{"empty key", `=m`, nil},
		{"unterminated quote", `msg="m`, nil},
		{"quote then junk", `msg="m"x`, nil},
		{"bad escape", `msg="\q"`, nil},
		{"prose", `Starting server on :8080`, nil},
	})
}

func TestParseTextLogrus(t *testing.T) {
	src := func(line string) string { return "peers_more_test.go:" + line }
	at := peerTime.Truncate(time.Second) // logrus's default time has no fraction
	fn := "func=github.com/asyncbus/asyncbus/benchmarks/pretty.logrusLines"
	runPeerCases(t, "logrus text", map[string]*parsed{
		"logrus text info":  {time: at, level: "INFO", source: src("72"), msg: "request served", attrs: []string{fn, "service=api", "status=200"}},
		"logrus text error": {time: at, level: "ERROR", source: src("73"), msg: "write failed", attrs: []string{fn, "error=disk full", "service=api"}},
		"logrus text trace": {time: at, level: "TRACE", source: src("74"), msg: "tracing", attrs: []string{fn, "service=api"}},
		"logrus text warn":  {time: at, level: "WARN", source: src("75"), msg: "slow", attrs: []string{fn, "service=api"}},
		"logrus text fatal": {time: at, level: "FATAL", source: src("76"), msg: "giving up", attrs: []string{fn, "service=api"}},
		"logrus text panic": {time: at, level: "FATAL", source: src("77"), msg: "panicking", attrs: []string{"level=panic", fn, "service=api"}},
	})
}
