package encode

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func consoleLines(color bool) []byte {
	src := &slog.Source{Function: "main.handler", File: "/home/dev/app/server/handler.go", Line: 42}
	withSrc := func(_ []string, a slog.Attr) slog.Attr { return a }
	base := New(Options{Format: Console, Color: color, ReplaceAttr: withSrc})
	var out []byte
	levels := []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, LevelFatal, slog.LevelInfo + 2}
	for i, l := range levels {
		r := record(fixedTime.Add(time.Duration(i)*time.Second), l, "request handled", 0, []slog.Attr{
			slog.String("method", "GET"), slog.Int("status", 200), slog.Duration("latency", 1500*time.Microsecond),
		})
		out = base.Append(out, r, nil)
	}
	derived := base.Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
	r := record(fixedTime.In(tzA), slog.LevelError, "bad \x1b[31m input\n", 0, []slog.Attr{
		slog.String("path", "/a b"), slog.Any("err", errors.New("boom")), slog.Group("user", slog.Int("id", 7)),
		slog.Any("src", src), slog.String("ctl", "\x1b[2J"),
	})
	out = derived.Append(out, r, []slog.Attr{slog.String("trace_id", "abc")})
	out = base.Append(out, record(time.Time{}, slog.LevelInfo, "", 0, nil), nil)
	out = base.AppendDropMarker(out, fixedTime, 12)
	return out
}

func TestConsoleGolden(t *testing.T) {
	for _, tc := range []struct {
		file  string
		color bool
	}{{"console.golden", false}, {"console_color.golden", true}} {
		got := consoleLines(tc.color)
		path := filepath.Join("testdata", tc.file)
		if *update {
			require.NoError(t, os.WriteFile(path, got, 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -update to create %s", path)
		require.Equal(t, string(want), string(got), tc.file)
	}
}

func TestConsoleSource(t *testing.T) {
	pc := callerPC()
	line := New(Options{Format: Console, AddSource: true}).Append(nil, record(fixedTime, slog.LevelInfo, "m", pc, nil), nil)
	require.Regexp(t, `^10:30:45\.123 INFO  encode/console_test\.go:[0-9]+ m\n$`, string(line))
	line = New(Options{Format: Console, AddSource: true}).Append(nil, record(fixedTime, slog.LevelInfo, "m", 0, nil), nil)
	require.Equal(t, "10:30:45.123 INFO  m\n", string(line))
}
