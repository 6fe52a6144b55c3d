package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of print.go: real output of log/slog's handlers and of asyncbus's
// formats, printed, is what asyncbus's own Console format writes for the
// same records.

// testTime has whole milliseconds (the Console clock's precision) but no
// whole second, and is in UTC as every producer below writes it.
var testTime = time.Date(2026, 12, 1, 12, 34, 56, 789_000_000, time.UTC)

// here returns the program counter of its caller, for a record's source.
func here() uintptr {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	return pcs[0]
}

// testRecords are the records every producer writes.
func testRecords() []slog.Record {
	pc := here()
	mk := func(t time.Time, l slog.Level, msg string, attrs ...slog.Attr) slog.Record {
		r := slog.NewRecord(t, l, msg, pc)
		r.AddAttrs(attrs...)
		return r
	}
	return []slog.Record{
		mk(testTime, slog.LevelInfo, "hello world", slog.Int("n", 1), slog.String("s", "a b"), slog.Bool("ok", true)),
		mk(testTime, slog.LevelDebug, "groups", slog.Group("g", slog.Float64("x", 2.5), slog.Group("h", slog.String("y", "z")))),
		mk(testTime, slog.LevelWarn, "quote \"me\"\tplease", slog.String("path", "/tmp/a=b")),
		mk(testTime, slog.LevelError, "failed", slog.Any("err", errors.New("boom: disk full"))),
		mk(testTime, encode.LevelTrace, "trace", slog.String("unicode", "héllo ✓")),
		mk(testTime, encode.LevelFatal, "fatal"),
		mk(testTime, slog.LevelInfo+2, "offset level", slog.Int64("big", -1234567)),
		mk(testTime, slog.LevelInfo, "escapes", slog.String("ctl", "a\x01b\nc"), slog.String("empty", "")),
	}
}

// consoleLine is asyncbus's Console rendering of r, with the source the
// record's PC gives.
func consoleLine(r slog.Record, color bool) string {
	enc := encode.New(encode.Options{Format: encode.Console, AddSource: true, Color: color})
	return string(enc.Append(nil, r, nil))
}

// produce writes records through a handler onto lines.
func produce(t *testing.T, newHandler func(io.Writer) slog.Handler, recs []slog.Record) []string {
	t.Helper()
	var buf bytes.Buffer
	h := newHandler(&buf)
	for _, r := range recs {
		require.NoError(t, h.Handle(context.Background(), r))
	}
	if c, ok := h.(*asyncbus.Handler); ok {
		require.NoError(t, c.Close())
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	require.Equal(t, "", lines[len(lines)-1])
	return lines[:len(lines)-1]
}

func asyncbusHandler(f asyncbus.Format) func(io.Writer) slog.Handler {
	return func(w io.Writer) slog.Handler {
		return asyncbus.NewHandler(w, &asyncbus.Options{Format: f, AddSource: true, Level: slog.Level(-100)})
	}
}

func TestPrintMatchesConsole(t *testing.T) {
	slogOpts := &slog.HandlerOptions{AddSource: true, Level: slog.Level(-100)}
	for _, tc := range []struct {
		name       string
		newHandler func(io.Writer) slog.Handler
		// skip lists records the format cannot carry exactly.
		skip map[int]string
	}{
		{"slog JSON", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, slogOpts) }, nil},
		{"slog Text", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, slogOpts) }, nil},
		{"asyncbus JSON", asyncbusHandler(asyncbus.JSON), nil},
		{"asyncbus Text", asyncbusHandler(asyncbus.Text), nil},
		{"asyncbus Logfmt", asyncbusHandler(asyncbus.Logfmt), nil},
		{"asyncbus ZapJSON", asyncbusHandler(asyncbus.ZapJSON.WithZapTime(encode.ZapTimeRFC3339Nano)), map[int]string{
			4: "zap has no level below debug",
			6: "zap has no level between info and warn",
		}},
		{"asyncbus Console", asyncbusHandler(asyncbus.Console), nil},
		{"asyncbus ZapConsole", asyncbusHandler(asyncbus.ZapConsole.WithZapTime(encode.ZapTimeRFC3339Nano)), map[int]string{
			2: "zap's console writes the message raw: its tab splits the columns",
			4: "zap has no level below debug",
			6: "zap has no level between info and warn",
		}},
		{"asyncbus GCPJSON", asyncbusHandler(asyncbus.GCPJSON), map[int]string{
			4: "Google Cloud has no level below DEBUG",
			6: "Google Cloud has no level between INFO and WARNING",
		}},
		{"asyncbus ECSJSON", asyncbusHandler(asyncbus.ECSJSON), map[int]string{
			3: "ECS writes an error as an object (message, type)",
		}},
		{"asyncbus DatadogJSON", asyncbusHandler(asyncbus.DatadogJSON), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := testRecords()
			lines := produce(t, tc.newHandler, recs)
			require.Len(t, lines, len(recs))
			p := newPrinter(false, true, filter{})
			for i, line := range lines {
				if why, ok := tc.skip[i]; ok {
					t.Logf("record %d skipped: %s", i, why)
					continue
				}
				in := []byte(strings.TrimSuffix(line, "\n"))
				assert.Equal(t, consoleLine(recs[i], false), string(p.appendLine(nil, in)), "from %s", line)
			}
		})
	}
}

func TestPrintColour(t *testing.T) {
	r := testRecords()[0]
	line := produce(t, func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, &slog.HandlerOptions{AddSource: true}) }, []slog.Record{r})[0]
	p := newPrinter(true, true, filter{})
	got := string(p.appendLine(nil, []byte(strings.TrimSuffix(line, "\n"))))
	assert.Equal(t, consoleLine(r, true), got)
	assert.Contains(t, got, "\x1b[32mINFO\x1b[0m", "INFO in green")
}

// TestPrintMarkers: asyncbus's markers, as asyncbus writes them, get a
// badge with their count.
func TestPrintMarkers(t *testing.T) {
	dropJSON := encode.New(encode.Options{Format: encode.JSON}).AppendDropMarker(nil, testTime, 42)
	dropLogfmt := encode.New(encode.Options{Format: encode.Logfmt}).AppendDropMarker(nil, testTime, 7)
	sample := slog.NewRecord(testTime, slog.LevelInfo, "suppressed 17 similar records", 0)
	sample.AddAttrs(slog.String("sampled_msg", "cache miss"))
	other := slog.NewRecord(testTime, slog.LevelError, "asyncbus: flight recorder dump", 0)
	other.AddAttrs(slog.Int("records", 128))
	otherNoCount := slog.NewRecord(testTime, slog.LevelWarn, "asyncbus: write /x: disk full", 0)
	lines := produce(t, asyncbusHandler(asyncbus.Text), []slog.Record{sample, other, otherNoCount})
	for _, tc := range []struct {
		name, line, want string
	}{
		{"drop, JSON", string(dropJSON), "[DROPPED 42] 12:34:56.789 WARN  asyncbus: records dropped dropped=42\n"},
		{"drop, logfmt", string(dropLogfmt), "[DROPPED 7] 12:34:56.789 WARN  asyncbus: records dropped dropped=7\n"},
		{"sampling", lines[0], "[SUPPRESSED 17] 12:34:56.789 INFO  suppressed 17 similar records sampled_msg=\"cache miss\"\n"},
		{"other with a count", lines[1], "[ASYNCBUS 128] 12:34:56.789 ERROR asyncbus: flight recorder dump records=128\n"},
		{"other", lines[2], "[ASYNCBUS] 12:34:56.789 WARN  asyncbus: write /x: disk full\n"},
		{"not a marker", `{"msg":"suppressed many similar records"}`, "suppressed many similar records\n"},
		{"sampling, one", `{"time":"2026-01-02T12:34:56.789Z","level":"INFO","msg":"suppressed 1 similar record"}`, "[SUPPRESSED 1] 12:34:56.789 INFO  suppressed 1 similar record\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPrinter(false, true, filter{})
			assert.Equal(t, tc.want, string(p.appendLine(nil, []byte(strings.TrimSuffix(tc.line, "\n")))))
		})
	}
	p := newPrinter(true, true, filter{})
	assert.True(t, strings.HasPrefix(string(p.appendLine(nil, bytes.TrimSuffix(dropJSON, []byte("\n")))), "\x1b[1;7;31m[DROPPED 42]\x1b[0m "),
		"the drop badge in bold reverse red")
}

// TestPrintPassesThrough: lines that are no record come out unchanged.
func TestPrintPassesThrough(t *testing.T) {
	for _, line := range []string{
		"",
		"goroutine 1 [running]:",
		"\tmain.main()",
		`{"a":1}`,
		`{"msg":"cut short`,
		`{"msg":"x"} trailing`,
		"k=v other=1",
		"msg=\"unterminated",
		"\xff\xfe binary \x00",
		"panic: boom [recovered]",
		"I1201 not klog",
	} {
		p := newPrinter(true, false, filter{})
		assert.Equal(t, line+"\n", string(p.appendLine(nil, []byte(line))), "%q", line)
	}
}

// TestPrintInvalidUTF8: a recognised line's invalid bytes show as U+FFFD.
func TestPrintInvalidUTF8(t *testing.T) {
	p := newPrinter(false, true, filter{})
	got := string(p.appendLine(nil, []byte("{\"level\":\"info\",\"msg\":\"bad \xff byte\",\"k\":\"\xc3\"}")))
	assert.Equal(t, "INFO  \"bad \uFFFD byte\" k=\"\uFFFD\"\n", got)
}

// TestPrintZapStack: the stack trace zap's console encoding writes below
// a record (here asyncbus's ZapConsole) is shown or left out with it;
// other lines after it are not.
func TestPrintZapStack(t *testing.T) {
	const stack = "main.run\n\t/src/app/main.go:42\nmain.main\n\t/src/app/main.go:12"
	enc := encode.New(encode.Options{Format: encode.ZapConsole}).Named("api")
	zapLine := func(l slog.Level, msg string) string {
		r := slog.NewRecord(testTime, l, msg, 0)
		r.AddAttrs(slog.String("stacktrace", stack))
		return string(enc.Append(nil, r, nil))
	}
	in := zapLine(slog.LevelWarn, "slow") + "goroutine 1 [running]:\n" + zapLine(slog.LevelError, "failed") +
		`{"level":"info","msg":"plain"}` + "\nmain.notAStack\n"
	lines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
	require.Len(t, lines, 13)
	for _, tc := range []struct {
		name string
		f    filter
		want []int // indexes of lines kept
	}{
		{"no filter", filter{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"the warning's stack goes with it", filter{minLevel: slog.LevelError, hasLevel: true}, []int{5, 6, 7, 8, 9, 10, 12}},
		{"a matching record keeps its stack", filter{matches: []match{{"msg", "failed"}}}, []int{6, 7, 8, 9, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPrinter(false, true, tc.f)
			var kept []int
			for i, line := range lines {
				if len(p.appendLine(nil, []byte(line))) > 0 {
					kept = append(kept, i)
				}
			}
			assert.Equal(t, tc.want, kept)
		})
	}
}

// TestLevelKeepsZapStacks: -level keeps a kept record's stack trace lines
// and leaves out a hidden one's, in the bytes zap's development logger
// writes (zap.NewDevelopmentConfig, plain and with
// CapitalColorLevelEncoder: WARN and above carry a stack) and in
// asyncbus's ZapConsole with StackTraceLevel.
func TestLevelKeepsZapStacks(t *testing.T) {
	const stack = "example.com/app.run\n\t/src/app/main.go:17\ntesting.tRunner\n\t/usr/local/go/src/testing/testing.go:2036\n"
	zapDev := func(level string) string {
		return "2026-12-06T06:52:31.435Z\t" + level + "\tapp/main.go:17\tmsg " + level + "\t{\"n\": 1}\n"
	}
	var zc bytes.Buffer
	h := asyncbus.NewHandler(&zc, &asyncbus.Options{Format: asyncbus.ZapConsole, Features: asyncbus.FeatureOptions{StackTraceLevel: slog.LevelWarn}})
	l := slog.New(h)
	l.Info("msg INFO")
	l.Warn("msg WARN")
	l.Error("msg ERROR")
	l.Info("msg INFO")
	require.NoError(t, h.Close())
	require.Equal(t, 2, strings.Count(zc.String(), "testing.tRunner\n\t"), zc.String())
	for name, in := range map[string]string{
		"zap development": zapDev("INFO") + zapDev("WARN") + stack + zapDev("ERROR") + stack + zapDev("INFO"),
		"zap development, coloured": zapDev("\x1b[34mINFO\x1b[0m") + zapDev("\x1b[33mWARN\x1b[0m") + stack +
			zapDev("\x1b[31mERROR\x1b[0m") + stack + zapDev("\x1b[34mINFO\x1b[0m"),
		"asyncbus ZapConsole": zc.String(),
	} {
		for _, tc := range []struct {
			level  string
			stacks int
		}{{"warn", 2}, {"error", 1}} {
			t.Run(name+"/"+tc.level, func(t *testing.T) {
				var out, errOut bytes.Buffer
				code := run(t.Context(), []string{"-level", tc.level, "-color", "never"}, strings.NewReader(in), &out, &errOut)
				require.Equal(t, 0, code, errOut.String())
				got := out.String()
				assert.NotContains(t, got, "msg INFO")
				assert.Equal(t, tc.level == "warn", strings.Contains(got, "msg WARN"), got)
				assert.Contains(t, got, "msg ERROR")
				assert.Equal(t, tc.stacks, strings.Count(got, "testing.tRunner\n\t"), got)
				lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
				assert.True(t, strings.HasPrefix(lines[len(lines)-1], "\t"), "the last line kept is the error's stack: %s", got)
			})
		}
	}
}
