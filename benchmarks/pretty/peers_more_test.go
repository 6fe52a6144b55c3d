package pretty

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	plog "github.com/phuslu/log"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// More peers' lines for testdata/peers.txt: zap's development encodings,
// logrus and phuslu/log. (A separate file, so that the source lines the
// pretty-printer's tests expect of peers_test.go stay where they are.)

// zapDevLines are zap's development config: its JSON (keys T, L, N, C, M)
// and its console encoding, the default of zap.NewDevelopment, with
// zapr's V(2) on the console.
func zapDevLines(t *testing.T) []line {
	var buf bytes.Buffer
	all := zap.LevelEnablerFunc(func(zapcore.Level) bool { return true })
	newDev := func(enc zapcore.Encoder) *zap.Logger {
		return zap.New(zapcore.NewCore(enc, zapcore.AddSync(&buf), all), zap.AddCaller(), zap.WithClock(fixedClock{}))
	}
	cfg := zap.NewDevelopmentEncoderConfig()
	js := newDev(zapcore.NewJSONEncoder(cfg)).Named("api")
	js.Info("request served", zap.String("path", "/v1/items"), zap.Int("status", 200))
	js.Debug("cache lookup", zap.Namespace("req"), zap.String("id", "r-1"))
	js.Error("write failed", zap.Error(errors.New("disk full")))
	console := newDev(zapcore.NewConsoleEncoder(cfg))
	named := console.Named("api")
	named.Info("request served", zap.String("path", "/v1/items"), zap.Int("status", 200), zap.Duration("took", 1500*time.Millisecond))
	named.Debug("cache lookup", zap.Strings("keys", []string{"a", "b"}), zap.Namespace("req"), zap.String("id", "r-1"))
	named.Warn("slow")
	named.Error("write failed", zap.Error(errors.New("disk full")))
	named.DPanic("invariant broken")
	console.Info("no name, no fields")
	zapr.NewLogger(console).V(2).Info("verbose", "n", 2)
	return collect(t, &buf, "dev-zap json info", "dev-zap json debug", "dev-zap json error",
		"dev-zap console info", "dev-zap console debug", "dev-zap console warn", "dev-zap console error",
		"dev-zap console dpanic", "dev-zap console plain", "dev-zap console V(2)")
}

// logrusLines are logrus's JSON and text formatters (the text one as it
// writes to anything but a terminal), with the caller reported.
func logrusLines(t *testing.T) []line {
	var buf bytes.Buffer
	// The caller's file is the base name: the full path names this checkout.
	caller := func(f *runtime.Frame) (string, string) {
		return f.Function, filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
	}
	newLogrus := func(f logrus.Formatter) *logrus.Entry {
		l := logrus.New()
		l.SetOutput(&buf)
		l.SetFormatter(f)
		l.SetLevel(logrus.TraceLevel)
		l.SetReportCaller(true)
		return l.WithTime(peerTime).WithField("service", "api")
	}
	for _, log := range []*logrus.Entry{
		newLogrus(&logrus.JSONFormatter{CallerPrettyfier: caller}),
		newLogrus(&logrus.TextFormatter{CallerPrettyfier: caller}),
	} {
		log.WithField("status", 200).Info("request served")
		log.WithError(errors.New("disk full")).Error("write failed")
		log.Trace("tracing")
		log.Warn("slow")
		log.Log(logrus.FatalLevel, "giving up") // Log neither exits nor panics
		log.Log(logrus.PanicLevel, "panicking")
	}
	return collect(t, &buf, "logrus json info", "logrus json error", "logrus json trace", "logrus json warn",
		"logrus json fatal", "logrus json panic",
		"logrus text info", "logrus text error", "logrus text trace", "logrus text warn",
		"logrus text fatal", "logrus text panic")
}

// phusluTime and phusluGoroutine match phuslu/log's time, which it takes
// from the wall clock, and its goroutine number: made fixed.
var (
	phusluTime      = regexp.MustCompile(`"time":"[^"]*"`)
	phusluGoroutine = regexp.MustCompile(`"goid":\d+`)
)

// phusluLines are phuslu/log's JSON. A fatal line would exit the test
// binary: none is written; a panic line is, its panic recovered.
func phusluLines(t *testing.T) []line {
	var buf bytes.Buffer
	log := plog.Logger{
		Level:        plog.TraceLevel,
		Caller:       1,
		TimeLocation: time.UTC,
		Context:      plog.NewContext(nil).Str("service", "api").Value(),
		Writer:       &plog.IOWriter{Writer: &buf},
	}
	log.Info().Str("path", "/v1/items").Int("status", 200).Msg("request served")
	log.Error().Err(errors.New("disk full")).Msg("write failed")
	log.Debug().Dict("req", plog.NewContext(nil).Str("id", "r-1").Value()).Msg("cache lookup")
	log.Trace().Msg("tracing")
	log.Warn().Msg("slow")
	func() {
		defer func() { _ = recover() }()
		log.Panic().Msg("panicking")
	}()
	log.Log().Msg("no level")
	out := collect(t, &buf, "phuslu info", "phuslu error", "phuslu debug", "phuslu trace", "phuslu warn",
		"phuslu panic", "phuslu no level")
	for i := range out {
		out[i].text = phusluTime.ReplaceAllLiteralString(out[i].text, `"time":"2026-12-01T12:34:56.789Z"`)
		out[i].text = phusluGoroutine.ReplaceAllLiteralString(out[i].text, `"goid":1`)
	}
	return out
}
