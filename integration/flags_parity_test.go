package integration

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/asyncbus/asyncbus/logrbridge"
)

// zapToSlog pairs the zap levels a logr program can produce with the slog
// level logrbridge uses for them: V(n) is zap -n and slog -n, then warn,
// error, dpanic, panic and fatal.
var zapToSlog = func() map[zapcore.Level]slog.Level {
	m := map[zapcore.Level]slog.Level{
		zapcore.WarnLevel:   slog.LevelWarn,
		zapcore.ErrorLevel:  slog.LevelError,
		zapcore.DPanicLevel: logrbridge.ZapDPanicLevel,
		zapcore.PanicLevel:  logrbridge.ZapPanicLevel,
		zapcore.FatalLevel:  logrbridge.ZapFatalLevel,
	}
	for n := 0; n <= 127; n++ {
		m[zapcore.Level(-n)] = slog.Level(-n)
	}
	return m
}()

func parseBoth(t *testing.T, args []string) (*crzap.Options, error, *logrbridge.Options, error) {
	t.Helper()
	cr := &crzap.Options{}
	crFS := flag.NewFlagSet("x", flag.ContinueOnError)
	crFS.SetOutput(io.Discard)
	cr.BindFlags(crFS)
	crErr := crFS.Parse(args)

	ours := &logrbridge.Options{}
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
		return logrbridge.EncodingJSON
	}
	return logrbridge.EncodingConsole
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

// ourTime encodes ts with logrbridge's time encoder through slog's JSON handler.
func ourTime(t *testing.T, enc logrbridge.TimeEncoder, ts time.Time) any {
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	l.Info("m", "t", enc(ts))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	return m["t"]
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
			assert.Equal(t, crEncoding(t, cr), ours.Encoding)

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
				assert.Nil(t, ours.TimeEncoder)
			} else if assert.NotNil(t, ours.TimeEncoder) {
				assert.Equal(t, crTime(t, cr.TimeEncoder, ts), ourTime(t, ours.TimeEncoder, ts))
			}
		})
	}
}
