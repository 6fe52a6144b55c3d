package logwriter

import (
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineLevel(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       slog.Level
		ok         bool
	}{
		{"zap JSON", `{"level":"error","ts":1764662400.1,"msg":"boom"}` + "\n", slog.LevelError, true},
		{"zap JSON capital", `{"level":"WARN","ts":1,"msg":"x"}` + "\n", slog.LevelWarn, true},
		{"zap dpanic", `{"level":"dpanic","msg":"x"}` + "\n", slog.LevelError, true},
		{"zap fatal", `{"level":"fatal","msg":"x"}` + "\n", asyncbus.LevelFatal, true},
		{"zerolog", `{"level":"info","time":"2026-12-02T07:48:48Z","message":"hi"}` + "\n", slog.LevelInfo, true},
		{"zerolog panic", `{"level":"panic","message":"hi"}` + "\n", asyncbus.LevelFatal, true},
		{"zerolog trace", `{"level":"trace","message":"hi"}` + "\n", asyncbus.LevelTrace, true},
		{"logrus JSON, level after fields", `{"a":1,"level":"warning","msg":"x","time":"t"}` + "\n", slog.LevelWarn, true},
		{"logrus text", `time="2026-12-02T07:48:48Z" level=error msg="boom"` + "\n", slog.LevelError, true},
		{"logrus text fatal", `time="t" level=fatal msg=x` + "\n", asyncbus.LevelFatal, true},
		{"slog text", `time=2026-12-02T07:48:48Z level=DEBUG msg=hi` + "\n", slog.LevelDebug, true},
		{"quoted level", `level="info" msg=x` + "\n", slog.LevelInfo, true},
		{"level= inside a word is not a level", `xlevel=error msg=x` + "\n", 0, false},
		{"a later level= token", `note=xlevel=error level=warn msg=x` + "\n", slog.LevelWarn, true},
		{"zap console", "2026-12-02T07:48:48.000Z\tERROR\tboom\t{\"a\":1}\n", slog.LevelError, true},
		{"zap console without time", "INFO\tmain.go:12\thi\n", slog.LevelInfo, true},
		{"klog error", "E1202 07:48:48.123456   12345 main.go:12] boom\n", slog.LevelError, true},
		{"klog fatal", "F1202 07:48:48.123456   12345 main.go:12] boom\n", asyncbus.LevelFatal, true},
		{"klog info", "I1202 07:48:48.123456   12345 main.go:12] hi\n", slog.LevelInfo, true},
		{"standard log", "2026/12/02 07:48:48 something happened\n", 0, false},
		{"unknown JSON level", `{"level":"loud","msg":"x"}` + "\n", 0, false},
		{"unterminated JSON level", `{"level":"err`, 0, false},
		{"logrus JSON, level after a long error", `{"error":"` + strings.Repeat("e", 2*levelScan) + `","level":"error","msg":"x","time":"t"}` + "\n", slog.LevelError, true},
		{"JSON level after nested values", `{"a":{"level":"debug","b":[1,{"c":"}"}]},"n":-1.5e3,"t":true,"level":"fatal"}` + "\n", asyncbus.LevelFatal, true},
		{"JSON level spelled inside a string", `{"msg":"\"level\":\"error\"","level":"info"}` + "\n", slog.LevelInfo, true},
		{"JSON nested level only", `{"msg":"x","req":{"level":"error"}}` + "\n", 0, false},
		{"JSON escaped backslash before a quote", `{"msg":"a\\","x":"b\"c","level":"warn"}` + "\n", slog.LevelWarn, true},
		{"JSON with spaces", `{ "msg" : "x" , "level" : "warn" }` + "\n", slog.LevelWarn, true},
		{"JSON level not a string", `{"level":5,"msg":"x"}` + "\n", 0, false},
		{"JSON cut in a value", `{"msg":"abc`, 0, false},
		{"JSON behind a prefix", `2026/12/02 07:48:48 {"level":"error","msg":"x"}` + "\n", slog.LevelError, true},
		{"zap console coloured", "2026-12-02T07:48:48.000Z\t\x1b[31mERROR\x1b[0m\tmain.go:1\tboom\n", slog.LevelError, true},
		{"zap console coloured lowercase", "\x1b[35mdpanic\x1b[0m\tboom\n", slog.LevelError, true},
		{"zap console bold colour", "t\t\x1b[1;31mFATAL\x1b[0m\tboom\n", asyncbus.LevelFatal, true},
		{"level past the scanned prefix", strings.Repeat("x", levelScan) + ` level=error`, 0, false},
		{"empty", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := lineLevel([]byte(tc.line))
			require.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// levelRecorder records the level callerLevel gives each of its writes.
type levelRecorder struct{ levels []slog.Level }

func (r *levelRecorder) Write(p []byte) (int, error) {
	r.levels = append(r.levels, callerLevel())
	return len(p), nil
}

func TestCallerLevelKnowsStandardLogsFatalAndPanic(t *testing.T) {
	r := &levelRecorder{}
	l := log.New(r, "", 0)
	for range 2 { // the second round is answered from the cache
		l.Print("a")
		l.Printf("b")
		require.Panics(t, func() { l.Panic("c") })
		require.Panics(t, func() { l.Panicf("d") })
		require.Panics(t, func() { l.Panicln("e") })
		_, _ = r.Write([]byte("f")) // not from the log package
	}
	want := []slog.Level{slog.LevelInfo, slog.LevelInfo, asyncbus.LevelFatal, asyncbus.LevelFatal, asyncbus.LevelFatal, slog.LevelInfo}
	assert.Equal(t, append(want, want...), r.levels)
}

func TestCallerLevelAllocatesNothing(t *testing.T) {
	r := &levelRecorder{levels: make([]slog.Level, 0, 1000)}
	l := log.New(r, "", 0)
	l.Print("warm the cache")
	allocs := testing.AllocsPerRun(100, func() { _ = callerLevel() })
	assert.Zero(t, allocs)
}
