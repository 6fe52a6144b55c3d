package integration

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/go-logr/logr"

	"github.com/asyncbus/asyncbus/logrbridge"
	ourzap "github.com/asyncbus/asyncbus/logrbridge/zap"
)

// zapToSlog pairs the zap levels a logr program can produce with the slog
// level the drop-in uses for them: V(n) is zap -n and slog -n, then warn,
// error, dpanic, panic and fatal.
var zapToSlog = func() map[zapcore.Level]slog.Level {
	m := map[zapcore.Level]slog.Level{
		zapcore.WarnLevel:   slog.LevelWarn,
		zapcore.ErrorLevel:  slog.LevelError,
		zapcore.DPanicLevel: ourzap.DPanicLevel,
		zapcore.PanicLevel:  ourzap.PanicLevel,
		zapcore.FatalLevel:  ourzap.FatalLevel,
	}
	for n := 0; n <= 127; n++ {
		m[zapcore.Level(-n)] = slog.Level(-n)
	}
	return m
}()

func parseBoth(t *testing.T, args []string) (*crzap.Options, error, *ourzap.Options, error) {
	t.Helper()
	cr := &crzap.Options{}
	crFS := flag.NewFlagSet("x", flag.ContinueOnError)
	crFS.SetOutput(io.Discard)
	cr.BindFlags(crFS)
	crErr := crFS.Parse(args)

	ours := &ourzap.Options{}
	ourFS := flag.NewFlagSet("x", flag.ContinueOnError)
	ourFS.SetOutput(io.Discard)
	ours.BindFlags(ourFS)
	ourErr := ourFS.Parse(args)

	// Same flags, same help texts.
	crFS.VisitAll(func(f *flag.Flag) {
		of := ourFS.Lookup(f.Name)
		if assert.NotNil(t, of, f.Name) {
			assert.Equal(t, f.Usage, of.Usage, f.Name)
			assert.Equal(t, f.DefValue, of.DefValue, f.Name)
			assert.Equal(t, f.Value.String(), of.Value.String(), f.Name)
		}
	})
	return cr, crErr, ours, ourErr
}

// crEncoding tells which encoder controller-runtime's NewEncoder builds.
func crEncoding(t *testing.T, o *crzap.Options) string {
	if o.NewEncoder == nil {
		return ""
	}
	buf, err := o.NewEncoder().EncodeEntry(zapcore.Entry{Message: "m"}, nil)
	require.NoError(t, err)
	if strings.HasPrefix(buf.String(), "{") {
		return "json"
	}
	return "console"
}

// ourEncoding tells which encoder the drop-in's NewEncoder builds.
func ourEncoding(o *ourzap.Options) string {
	switch {
	case o.NewEncoder == nil:
		return ""
	case reflect.DeepEqual(o.NewEncoder(), ourzap.NewJSONEncoder()):
		return "json"
	case reflect.DeepEqual(o.NewEncoder(), ourzap.NewConsoleEncoder()):
		return "console"
	}
	return "other"
}

// crTime encodes ts with controller-runtime's time encoder, as JSON.
func crTime(t *testing.T, enc zapcore.TimeEncoder, ts time.Time) any {
	cfg := zapcore.EncoderConfig{TimeKey: "t", EncodeTime: enc}
	buf, err := zapcore.NewJSONEncoder(cfg).EncodeEntry(zapcore.Entry{Time: ts}, nil)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	return m["t"]
}

// ourTime encodes ts with the drop-in's time encoder, as its JSON encoding
// writes the record time.
func ourTime(t *testing.T, enc ourzap.TimeEncoder, ts time.Time) any {
	var buf bytes.Buffer
	l := ourzap.New(ourzap.WriteTo(&buf), ourzap.JSONEncoder(func(c *ourzap.EncoderConfig) { c.EncodeTime = enc }))
	require.NoError(t, logr.ToSlogHandler(l).Handle(t.Context(), slog.NewRecord(ts, slog.LevelInfo, "m", 0)))
	require.NoError(t, logrbridge.Close(l))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	return m["ts"]
}

func TestFlagParity(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 2*3600))
	for _, args := range [][]string{
		nil,
		{"--zap-devel"},
		{"--zap-devel=false"},
		{"--zap-encoder=json"}, {"--zap-encoder=console"}, {"--zap-encoder=JSON"}, {"--zap-encoder=xml"}, {"--zap-encoder="},
		{"--zap-log-level=debug"}, {"--zap-log-level=info"}, {"--zap-log-level=error"}, {"--zap-log-level=panic"},
		{"--zap-log-level=Debug"}, {"--zap-log-level=1"}, {"--zap-log-level=5"}, {"--zap-log-level=127"},
		{"--zap-log-level=0"}, {"--zap-log-level=-2"}, {"--zap-log-level=warn"}, {"--zap-log-level=1.5"}, {"--zap-log-level="},
		{"--zap-stacktrace-level=info"}, {"--zap-stacktrace-level=error"}, {"--zap-stacktrace-level=panic"},
		{"--zap-stacktrace-level=debug"}, {"--zap-stacktrace-level=warn"},
		{"--zap-time-encoding=epoch"}, {"--zap-time-encoding=millis"}, {"--zap-time-encoding=nanos"},
		{"--zap-time-encoding=iso8601"}, {"--zap-time-encoding=rfc3339"}, {"--zap-time-encoding=rfc3339nano"},
		{"--zap-time-encoding=RFC3339"}, {"--zap-time-encoding=nano"}, {"--zap-time-encoding=unix"},
		{"--zap-devel", "--zap-encoder=json", "--zap-log-level=3", "--zap-stacktrace-level=error", "--zap-time-encoding=iso8601"},
		{"--zap-devel=maybe"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cr, crErr, ours, ourErr := parseBoth(t, args)
			if crErr != nil {
				require.EqualError(t, ourErr, crErr.Error())
				return
			}
			require.NoError(t, ourErr)
			assert.Equal(t, cr.Development, ours.Development)
			assert.Equal(t, crEncoding(t, cr), ourEncoding(ours))

			if cr.Level == nil {
				assert.Nil(t, ours.Level)
			} else if assert.NotNil(t, ours.Level) {
				for zl, sl := range zapToSlog {
					assert.Equal(t, cr.Level.Enabled(zl), ours.Level.Level() <= sl, "level: zap %d / slog %d", zl, sl)
				}
			}
			if cr.StacktraceLevel == nil {
				assert.Nil(t, ours.StacktraceLevel)
			} else if assert.NotNil(t, ours.StacktraceLevel) {
				for zl, sl := range zapToSlog {
					assert.Equal(t, cr.StacktraceLevel.Enabled(zl), ours.StacktraceLevel.Level() <= sl, "stack: zap %d / slog %d", zl, sl)
				}
			}
			if cr.TimeEncoder == nil {
				assert.Equal(t, ourzap.TimeEncoder{}, ours.TimeEncoder)
				assert.Equal(t, crTime(t, zapcore.RFC3339TimeEncoder, ts), ourTime(t, ours.TimeEncoder, ts), "both default to RFC 3339")
			} else {
				assert.Equal(t, crTime(t, cr.TimeEncoder, ts), ourTime(t, ours.TimeEncoder, ts))
			}
		})
	}
}
