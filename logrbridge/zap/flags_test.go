package zap

import (
	"flag"
	"io"
	"log/slog"
	"testing"

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
	for _, tc := range []struct {
		args     []string
		dev      bool
		encoding string // "json", "console" or "" (NewEncoder unset)
		level    *slog.Level
		stack    *slog.Level
		time     *TimeEncoder
	}{
		{args: nil},
		{args: []string{"--zap-devel"}, dev: true},
		{args: []string{"--zap-devel=false"}},
		{args: []string{"--zap-encoder", "json"}, encoding: "json"},
		{args: []string{"--zap-encoder=Console"}, encoding: "console"},
		{args: []string{"--zap-log-level=debug"}, level: new(slog.Level(-1))},
		{args: []string{"--zap-log-level=INFO"}, level: new(slog.LevelInfo)},
		{args: []string{"--zap-log-level=error"}, level: new(slog.LevelError)},
		{args: []string{"--zap-log-level=panic"}, level: new(PanicLevel)},
		{args: []string{"--zap-log-level=200"}, level: new(slog.Level(56))}, // int8(-200), as controller-runtime
		{args: []string{"--zap-log-level=5"}, level: new(slog.Level(-5))},
		{args: []string{"--zap-stacktrace-level=info"}, stack: new(slog.LevelInfo)},
		{args: []string{"--zap-stacktrace-level=error"}, stack: new(slog.LevelError)},
		{args: []string{"--zap-stacktrace-level=Panic"}, stack: new(PanicLevel)},
		{args: []string{"--zap-time-encoding=epoch"}, time: &EpochTimeEncoder},
		{args: []string{"--zap-time-encoding=millis"}, time: &EpochMillisTimeEncoder},
		{args: []string{"--zap-time-encoding=nanos"}, time: &EpochNanosTimeEncoder},
		{args: []string{"--zap-time-encoding=iso8601"}, time: &ISO8601TimeEncoder},
		{args: []string{"--zap-time-encoding=rfc3339"}, time: &RFC3339TimeEncoder},
		{args: []string{"--zap-time-encoding=RFC3339Nano"}, time: &RFC3339NanoTimeEncoder},
	} {
		t.Run(joinArgs(tc.args), func(t *testing.T) {
			o, err := parseFlags(tc.args...)
			require.NoError(t, err)
			assert.Equal(t, tc.dev, o.Development)
			switch tc.encoding {
			case "":
				assert.Nil(t, o.NewEncoder)
			case "json":
				require.NotNil(t, o.NewEncoder)
				assert.Equal(t, NewJSONEncoder(), o.NewEncoder())
			case "console":
				require.NotNil(t, o.NewEncoder)
				assert.Equal(t, NewConsoleEncoder(), o.NewEncoder())
			}
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
			if tc.time == nil {
				assert.Equal(t, TimeEncoder{}, o.TimeEncoder)
			} else {
				assert.Equal(t, *tc.time, o.TimeEncoder)
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
