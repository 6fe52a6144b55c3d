package zap

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// This file mirrors sigs.k8s.io/controller-runtime/pkg/log/zap/flags.go:
// the same flag names, values, help texts and error messages, with slog
// levels in place of zapcore levels.

// BindFlags registers controller-runtime's zap flags on fs:
//   - zap-devel: development mode defaults (console encoder, V(1), stack
//     traces at Warn) or production (JSON, Info, stack traces at Error)
//   - zap-encoder: 'json' or 'console'
//   - zap-log-level: 'debug', 'info', 'error', 'panic' or an integer > 0 (V level)
//   - zap-stacktrace-level: 'info', 'error' or 'panic'
//   - zap-time-encoding: 'epoch', 'millis', 'nanos', 'iso8601', 'rfc3339' or
//     'rfc3339nano' (the help text says the default is 'epoch', as
//     controller-runtime's does; the default, there as here, is rfc3339)
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Development, "zap-devel", o.Development,
		"Development Mode defaults(encoder=consoleEncoder,logLevel=Debug,stackTraceLevel=Warn). "+
			"Production Mode defaults(encoder=jsonEncoder,logLevel=Info,stackTraceLevel=Error)")

	encVal := encoderFlag{setFunc: func(f NewEncoderFunc) { o.NewEncoder = f }}
	fs.Var(&encVal, "zap-encoder", "Zap log encoding (one of 'json' or 'console')")

	levelVal := levelFlag{setFunc: func(l slog.Leveler) { o.Level = l }}
	fs.Var(&levelVal, "zap-log-level",
		"Zap Level to configure the verbosity of logging. Can be one of 'debug', 'info', 'error', 'panic'"+
			" or any integer value > 0 which corresponds to custom debug levels of increasing verbosity")

	stackVal := stackTraceFlag{setFunc: func(l slog.Leveler) { o.StacktraceLevel = l }}
	fs.Var(&stackVal, "zap-stacktrace-level",
		"Zap Level at and above which stacktraces are captured (one of 'info', 'error', 'panic').")

	timeVal := timeEncodingFlag{setFunc: func(t TimeEncoder) { o.TimeEncoder = t }}
	fs.Var(&timeVal, "zap-time-encoding", "Zap time encoding (one of 'epoch', 'millis', 'nano', 'iso8601', 'rfc3339' or 'rfc3339nano'). Defaults to 'epoch'.")
}

var levelStrings = map[string]slog.Level{
	"debug": DebugLevel,
	"info":  InfoLevel,
	"error": ErrorLevel,
	"panic": PanicLevel,
}

var stackLevelStrings = map[string]slog.Level{
	"info":  InfoLevel,
	"error": ErrorLevel,
	"panic": PanicLevel,
}

type encoderFlag struct {
	setFunc func(NewEncoderFunc)
	value   string
}

var _ flag.Value = &encoderFlag{}

func (ev *encoderFlag) String() string { return ev.value }

// Type names the value for pflag.
func (ev *encoderFlag) Type() string { return "encoder" }

func (ev *encoderFlag) Set(flagValue string) error {
	switch strings.ToLower(flagValue) {
	case "json":
		ev.setFunc(NewJSONEncoder)
	case "console":
		ev.setFunc(NewConsoleEncoder)
	default:
		return fmt.Errorf("invalid encoder value \"%s\"", flagValue)
	}
	ev.value = flagValue
	return nil
}

type levelFlag struct {
	setFunc func(slog.Leveler)
	value   string
}

var _ flag.Value = &levelFlag{}

func (ev *levelFlag) Set(flagValue string) error {
	level, validLevel := levelStrings[strings.ToLower(flagValue)]
	if !validLevel {
		logLevel, err := strconv.Atoi(flagValue)
		if err != nil || logLevel <= 0 {
			return fmt.Errorf("invalid log level \"%s\"", flagValue)
		}
		// zapcore.Level is an int8: controller-runtime converts -logLevel
		// with int8(...), so 200 wraps around the same way here.
		level = slog.Level(int8(-logLevel))
	}
	lv := new(slog.LevelVar)
	lv.Set(level)
	ev.setFunc(lv)
	ev.value = flagValue
	return nil
}

func (ev *levelFlag) String() string { return ev.value }

// Type names the value for pflag.
func (ev *levelFlag) Type() string { return "level" }

type stackTraceFlag struct {
	setFunc func(slog.Leveler)
	value   string
}

var _ flag.Value = &stackTraceFlag{}

func (ev *stackTraceFlag) Set(flagValue string) error {
	level, validLevel := stackLevelStrings[strings.ToLower(flagValue)]
	if !validLevel {
		return fmt.Errorf("invalid stacktrace level \"%s\"", flagValue)
	}
	lv := new(slog.LevelVar)
	lv.Set(level)
	ev.setFunc(lv)
	ev.value = flagValue
	return nil
}

func (ev *stackTraceFlag) String() string { return ev.value }

// Type names the value for pflag.
func (ev *stackTraceFlag) Type() string { return "level" }

type timeEncodingFlag struct {
	setFunc func(TimeEncoder)
	value   string
}

var _ flag.Value = &timeEncodingFlag{}

func (ev *timeEncodingFlag) String() string { return ev.value }

// Type names the value for pflag.
func (ev *timeEncodingFlag) Type() string { return "time-encoding" }

func (ev *timeEncodingFlag) Set(flagValue string) error {
	switch strings.ToLower(flagValue) {
	case "rfc3339nano":
		ev.setFunc(RFC3339NanoTimeEncoder)
	case "rfc3339":
		ev.setFunc(RFC3339TimeEncoder)
	case "iso8601":
		ev.setFunc(ISO8601TimeEncoder)
	case "millis":
		ev.setFunc(EpochMillisTimeEncoder)
	case "nanos":
		ev.setFunc(EpochNanosTimeEncoder)
	case "epoch":
		ev.setFunc(EpochTimeEncoder)
	default:
		return fmt.Errorf("invalid time-encoding value \"%s\"", flagValue)
	}
	ev.value = flagValue
	return nil
}
