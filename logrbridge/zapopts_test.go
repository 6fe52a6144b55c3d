package logrbridge

import (
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseFlags(args ...string) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	return o, fs.Parse(args)
}

func TestBindFlags(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	for _, tc := range []struct {
		args      []string
		dev       bool
		encoding  string
		level     *slog.Level
		stack     *slog.Level
		timeValue any
	}{
		{args: nil},
		{args: []string{"--zap-devel"}, dev: true},
		{args: []string{"--zap-devel=false"}},
		{args: []string{"--zap-encoder", "json"}, encoding: "json"},
		{args: []string{"--zap-encoder=Console"}, encoding: "console"},
		{args: []string{"--zap-log-level=debug"}, level: new(slog.Level(-1))},
		{args: []string{"--zap-log-level=INFO"}, level: new(slog.LevelInfo)},
		{args: []string{"--zap-log-level=error"}, level: new(slog.LevelError)},
		{args: []string{"--zap-log-level=panic"}, level: new(ZapPanicLevel)},
		{args: []string{"--zap-log-level=5"}, level: new(slog.Level(-5))},
		{args: []string{"--zap-stacktrace-level=info"}, stack: new(slog.LevelInfo)},
		{args: []string{"--zap-stacktrace-level=error"}, stack: new(slog.LevelError)},
		{args: []string{"--zap-stacktrace-level=Panic"}, stack: new(ZapPanicLevel)},
		{args: []string{"--zap-time-encoding=epoch"}, timeValue: float64(ts.UnixNano()) / 1e9},
		{args: []string{"--zap-time-encoding=millis"}, timeValue: float64(ts.UnixNano()) / 1e6},
		{args: []string{"--zap-time-encoding=nanos"}, timeValue: ts.UnixNano()},
		{args: []string{"--zap-time-encoding=iso8601"}, timeValue: "2024-05-06T07:08:09.123Z"},
		{args: []string{"--zap-time-encoding=rfc3339"}, timeValue: "2024-05-06T07:08:09Z"},
		{args: []string{"--zap-time-encoding=RFC3339Nano"}, timeValue: "2024-05-06T07:08:09.123456789Z"},
	} {
		t.Run(joinArgs(tc.args), func(t *testing.T) {
			o, err := parseFlags(tc.args...)
			require.NoError(t, err)
			assert.Equal(t, tc.dev, o.Development)
			assert.Equal(t, tc.encoding, o.Encoding)
			if tc.level == nil {
				assert.Nil(t, o.Level)
			} else {
				require.NotNil(t, o.Level)
				assert.Equal(t, *tc.level, o.Level.Level())
			}
			if tc.stack == nil {
				assert.Nil(t, o.StacktraceLevel)
			} else {
				require.NotNil(t, o.StacktraceLevel)
				assert.Equal(t, *tc.stack, o.StacktraceLevel.Level())
			}
			if tc.timeValue == nil {
				assert.Nil(t, o.TimeEncoder)
			} else {
				require.NotNil(t, o.TimeEncoder)
				assert.Equal(t, tc.timeValue, o.TimeEncoder(ts).Any())
			}
		})
	}
}

func joinArgs(args []string) string {
	if len(args) == 0 {
		return "none"
	}
	s := args[0]
	for _, a := range args[1:] {
		s += " " + a
	}
	return s
}

func TestBindFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want string
	}{
		{"--zap-encoder=xml", `invalid value "xml" for flag -zap-encoder: invalid encoder value "xml"`},
		{"--zap-log-level=trace", `invalid value "trace" for flag -zap-log-level: invalid log level "trace"`},
		{"--zap-log-level=0", `invalid value "0" for flag -zap-log-level: invalid log level "0"`},
		{"--zap-log-level=-3", `invalid value "-3" for flag -zap-log-level: invalid log level "-3"`},
		{"--zap-stacktrace-level=debug", `invalid value "debug" for flag -zap-stacktrace-level: invalid stacktrace level "debug"`},
		{"--zap-time-encoding=nano", `invalid value "nano" for flag -zap-time-encoding: invalid time-encoding value "nano"`},
		{"--zap-devel=maybe", `invalid boolean value "maybe" for -zap-devel: parse error`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := parseFlags(tc.arg)
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestFlagValueMethods(t *testing.T) {
	o := &Options{}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--zap-encoder=JSON", "--zap-log-level=3", "--zap-stacktrace-level=info", "--zap-time-encoding=epoch"}))
	for name, typ := range map[string]string{
		"zap-encoder": "encoder", "zap-log-level": "level", "zap-stacktrace-level": "level", "zap-time-encoding": "time-encoding",
	} {
		v := fs.Lookup(name).Value
		assert.Equal(t, typ, v.(interface{ Type() string }).Type(), name)
	}
	assert.Equal(t, "JSON", fs.Lookup("zap-encoder").Value.String())
	assert.Equal(t, "3", fs.Lookup("zap-log-level").Value.String())
	assert.Equal(t, "info", fs.Lookup("zap-stacktrace-level").Value.String())
	assert.Equal(t, "epoch", fs.Lookup("zap-time-encoding").Value.String())
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		name             string
		in               Options
		encoding         string
		level, stackLvl  slog.Level
		keepsGivenWriter bool
	}{
		{"production", Options{}, EncodingJSON, slog.LevelInfo, slog.LevelError, false},
		{"development", Options{Development: true}, EncodingConsole, slog.Level(-1), slog.LevelWarn, false},
		{"explicit", Options{Development: true, Encoding: EncodingJSON, Level: slog.LevelWarn, StacktraceLevel: slog.LevelError, DestWriter: io.Discard},
			EncodingJSON, slog.LevelWarn, slog.LevelError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.in
			stderr := &lockedBuffer{}
			o.addDefaults(stderr)
			assert.Equal(t, tc.encoding, o.Encoding)
			assert.Equal(t, tc.level, o.Level.Level())
			assert.Equal(t, tc.stackLvl, o.StacktraceLevel.Level())
			if tc.keepsGivenWriter {
				assert.Equal(t, io.Discard, o.DestWriter)
			} else {
				assert.Same(t, stderr, o.DestWriter)
			}
		})
	}
}

func TestFunctionalOpts(t *testing.T) {
	in := &Options{Development: true, Encoding: EncodingJSON}
	o := &Options{}
	for _, f := range []Opts{UseDevMode(false), WriteTo(io.Discard), ConsoleEncoder(), Level(slog.Level(-3)), StacktraceLevel(slog.LevelError)} {
		f(o)
	}
	assert.False(t, o.Development)
	assert.Equal(t, io.Discard, o.DestWriter)
	assert.Equal(t, EncodingConsole, o.Encoding)
	assert.Equal(t, slog.Level(-3), o.Level.Level())
	assert.Equal(t, slog.LevelError, o.StacktraceLevel.Level())
	JSONEncoder()(o)
	assert.Equal(t, EncodingJSON, o.Encoding)
	UseFlagOptions(in)(o)
	assert.Equal(t, *in, *o)
}

func TestTimeReplacer(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	rep := timeReplacer(RFC3339TimeEncoder)
	assert.Equal(t, "2024-05-06T07:08:09Z", rep(nil, slog.Time(slog.TimeKey, ts)).Value.String())
	// Only the top-level built-in time key changes.
	assert.Equal(t, slog.KindTime, rep([]string{"g"}, slog.Time(slog.TimeKey, ts)).Value.Kind())
	assert.Equal(t, slog.KindTime, rep(nil, slog.Time("other", ts)).Value.Kind())
}
