// Package pretty writes the zap, zapr, zerolog, klog, logrus and phuslu/log
// lines that cmd/asyncbus-pretty's tests parse (testdata/peers.txt): the peers
// are imported only here, in the nested module, and TestPeersGolden
// regenerates the lines with the real libraries and checks the committed
// file against them (go test ./pretty -update rewrites it).
package pretty

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

var update = flag.Bool("update", false, "rewrite cmd/asyncbus-pretty/testdata/peers.txt")

const goldenPath = "../../cmd/asyncbus-pretty/testdata/peers.txt"

// peerTime is the time of every line whose logger takes a clock; as in
// the pretty-printer's tests, whole milliseconds, UTC.
var peerTime = time.Date(2026, 12, 1, 12, 34, 56, 789_000_000, time.UTC)

type fixedClock struct{}

func (fixedClock) Now() time.Time                         { return peerTime }
func (fixedClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// line is one named output line.
type line struct{ name, text string }

// collect splits buf's lines and names them in order.
func collect(t *testing.T, buf *bytes.Buffer, names ...string) []line {
	t.Helper()
	texts := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, texts, len(names), "lines: %q", texts)
	out := make([]line, len(names))
	for i, n := range names {
		out[i] = line{n, texts[i]}
	}
	return out
}

// stackValue is zap's stack trace, whose frames name this checkout's
// paths: replaced by a fixed two-frame stack of the same shape.
var stackValue = regexp.MustCompile(`"stacktrace":"(?:[^"\\]|\\.)*"`)

const fixedStack = `"stacktrace":"example.com/app.run\n\t/src/app/main.go:42\nmain.main\n\t/src/app/main.go:12"`

func zapLines(t *testing.T) []line {
	var buf bytes.Buffer
	newZap := func(cfg zapcore.EncoderConfig) *zap.Logger {
		core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), zapcore.AddSync(&buf), zap.DebugLevel)
		return zap.New(core, zap.AddCaller(), zap.WithClock(fixedClock{}), zap.AddStacktrace(zap.ErrorLevel))
	}
	prod := newZap(zap.NewProductionEncoderConfig()).Named("api")
	prod.Info("request served", zap.String("path", "/v1/items"), zap.Int("status", 200), zap.Duration("took", 1500*time.Millisecond))
	prod.Debug("cache lookup", zap.Strings("keys", []string{"a", "b"}), zap.Namespace("req"), zap.String("id", "r-1"))
	prod.Warn("slow", zap.Bool("retry", true))
	prod.Error("write failed", zap.Error(errors.New("disk full")))
	prod.DPanic("invariant broken")
	iso := zap.NewProductionEncoderConfig()
	iso.EncodeTime = zapcore.ISO8601TimeEncoder
	newZap(iso).Info("iso time")
	ms := zap.NewProductionEncoderConfig()
	ms.EncodeTime = zapcore.EpochMillisTimeEncoder
	newZap(ms).Info("millis time")
	zr := zapr.NewLogger(newZap(zap.NewProductionEncoderConfig()))
	zr.WithName("ctrl").Info("reconciled", "pod", "web-1")
	zr.V(1).Info("verbose")
	zr.Error(errors.New("timeout"), "sync failed")
	out := collect(t, &buf, "zap info", "zap debug", "zap warn", "zap error", "zap dpanic", "zap iso8601", "zap millis",
		"zapr info", "zapr V(1)", "zapr error")
	for i := range out {
		out[i].text = stackValue.ReplaceAllLiteralString(out[i].text, fixedStack)
	}
	return out
}

func zerologLines(t *testing.T) []line {
	var buf bytes.Buffer
	defer func(tf func() time.Time, cm func(uintptr, string, int) string, tff string) {
		zerolog.TimestampFunc, zerolog.CallerMarshalFunc, zerolog.TimeFieldFormat = tf, cm, tff
	}(zerolog.TimestampFunc, zerolog.CallerMarshalFunc, zerolog.TimeFieldFormat)
	zerolog.TimestampFunc = func() time.Time { return peerTime }
	// The default caller is the file's absolute path, which names this
	// checkout: the base name instead, a common setting.
	zerolog.CallerMarshalFunc = func(_ uintptr, file string, line int) string {
		return filepath.Base(file) + ":" + strconv.Itoa(line)
	}
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00"
	log := zerolog.New(&buf).Level(zerolog.TraceLevel).With().Timestamp().Caller().Str("service", "api").Logger()
	log.Info().Str("path", "/v1/items").Int("status", 200).Msg("request served")
	log.Error().Err(errors.New("disk full")).Msg("write failed")
	log.Debug().Dict("req", zerolog.Dict().Str("id", "r-1")).Strs("keys", []string{"a", "b"}).Msg("cache lookup")
	log.Trace().Msg("tracing")
	log.WithLevel(zerolog.FatalLevel).Msg("giving up")
	log.WithLevel(zerolog.PanicLevel).Msg("panicking")
	log.Log().Msg("no level")
	plain := zerolog.New(&buf).With().Timestamp().Logger()
	zerolog.TimeFieldFormat = zerolog.TimeFormatUnix
	plain.Warn().Msg("unix time")
	zerolog.TimeFieldFormat = zerolog.TimeFormatUnixMs
	plain.Warn().Msg("unix ms time")
	return collect(t, &buf, "zerolog info", "zerolog error", "zerolog debug", "zerolog trace", "zerolog fatal",
		"zerolog panic", "zerolog no level", "zerolog unix", "zerolog unix ms")
}

// klogHeader matches the clock and thread id of klog's header, which the
// global klog takes from the wall clock and the process: made fixed.
var klogHeader = regexp.MustCompile(`^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ `)

func klogLines(t *testing.T) []line {
	var buf bytes.Buffer
	tl := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&buf), textlogger.Verbosity(4), textlogger.FixedTime(peerTime)))
	tl.Info("Pod status updated", "pod", "kube-system/dns", "ready", true)
	tl.V(4).Info("Syncing", "count", 3)
	tl.Error(errors.New("connection refused"), "Failed to watch", "resource", "pods")
	tl.WithName("leader").Info("quoted \"msg\"", "multi", "line1 line2")
	out := collect(t, &buf, "klog info", "klog V(4)", "klog error", "klog named")

	buf.Reset()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	require.NoError(t, fs.Parse([]string{"-logtostderr=false", "-one_output=true", "-skip_headers=false"}))
	klog.SetOutput(&buf)
	klog.Infof("Starting controller on port %d", 8080)
	klog.Warningf("cache is %d%% full", 90)
	klog.ErrorS(errors.New("boom"), "Reconcile failed", "key", "default/web")
	klog.Flush()
	global := collect(t, &buf, "klog infof", "klog warningf", "klog errors")
	for i := range global {
		global[i].text = klogHeader.ReplaceAllString(global[i].text, "${1}1201 12:34:56.789000    4242 ")
	}
	for i := range out {
		out[i].text = klogHeader.ReplaceAllString(out[i].text, "${1}1201 12:34:56.789000    4242 ")
	}
	return append(out, global...)
}

// TestPeersGolden regenerates the lines and compares them with the
// committed file.
func TestPeersGolden(t *testing.T) {
	var all []line
	all = append(all, zapLines(t)...)
	all = append(all, zerologLines(t)...)
	all = append(all, klogLines(t)...)
	all = append(all, zapDevLines(t)...)
	all = append(all, logrusLines(t)...)
	all = append(all, phusluLines(t)...)
	var b strings.Builder
	b.WriteString("# Generated by benchmarks/pretty (go test ./pretty -update); do not edit.\n")
	for _, l := range all {
		require.NotContains(t, l.name, "\t") // the name ends at the first tab
		b.WriteString(l.name + "\t" + l.text + "\n")
	}
	if *update {
		require.NoError(t, os.WriteFile(goldenPath, []byte(b.String()), 0o644))
		return
	}
	committed, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	require.Equal(t, b.String(), string(committed), "the peers' output changed: go test ./pretty -update")
}
