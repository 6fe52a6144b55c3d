package logrbridge

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus"
)

// This file mirrors sigs.k8s.io/controller-runtime/pkg/log/zap (flags.go and
// the option half of zap.go) without depending on zap: levels are slog levels
// and time encoders return slog values.

// Encoding names accepted by Options.Encoding ("json" and "console" are the
// --zap-encoder values).
const (
	EncodingJSON    = "json"
	EncodingConsole = "console"
	EncodingText    = "text"
	EncodingLogfmt  = "logfmt"
)

// Zap's levels expressed as slog levels. Zap level -n (logr V(n)) is slog
// level -n; the levels above Info keep their order: warn, error, dpanic,
// panic and fatal map to slog Warn, Error, Error+1, Error+2 and
// asyncbus.LevelFatal (12).
const (
	ZapDebugLevel  = slog.Level(-1)
	ZapInfoLevel   = slog.LevelInfo
	ZapWarnLevel   = slog.LevelWarn
	ZapErrorLevel  = slog.LevelError
	ZapDPanicLevel = slog.LevelError + 1
	ZapPanicLevel  = slog.LevelError + 2
	ZapFatalLevel  = slog.Level(12)
)

// TimeEncoder turns the record time into the value written under the time key.
type TimeEncoder func(t time.Time) slog.Value

// The time encoders selected by --zap-time-encoding, computed like zapcore's
// encoders of the same name.
var (
	// EpochTimeEncoder writes seconds since the epoch as a float.
	EpochTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Float64Value(float64(t.UnixNano()) / float64(time.Second))
	}
	// EpochMillisTimeEncoder writes milliseconds since the epoch as a float.
	EpochMillisTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Float64Value(float64(t.UnixNano()) / float64(time.Millisecond))
	}
	// EpochNanosTimeEncoder writes nanoseconds since the epoch as an integer.
	EpochNanosTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Int64Value(t.UnixNano())
	}
	// ISO8601TimeEncoder writes "2006-01-02T15:04:05.000Z0700".
	ISO8601TimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.StringValue(t.Format("2006-01-02T15:04:05.000Z0700"))
	}
	// RFC3339TimeEncoder writes time.RFC3339.
	RFC3339TimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.StringValue(t.Format(time.RFC3339))
	}
	// RFC3339NanoTimeEncoder writes time.RFC3339Nano.
	RFC3339NanoTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.StringValue(t.Format(time.RFC3339Nano))
	}
)

// Options mirrors controller-runtime's zap.Options.
type Options struct {
	// Development selects development defaults: console encoding, V(1)
	// enabled (zap's Debug), stack traces at Warn and above. Otherwise:
	// JSON, Info, stack traces at Error and above. Neither samples.
	Development bool
	// Encoding is "json", "console", "text" or "logfmt"; empty picks the
	// mode's default (console in development, JSON otherwise).
	Encoding string
	// DestWriter is where logs go; default os.Stderr.
	DestWriter io.Writer
	// Level is the minimum enabled level; V(n) is level -n. Default:
	// ZapDebugLevel (-1) in development, Info otherwise.
	Level slog.Leveler
	// StacktraceLevel is the level at and above which a "stacktrace"
	// attribute is added. Default: Warn in development, Error otherwise.
	StacktraceLevel slog.Leveler
	// TimeEncoder re-encodes the record time. Default nil: the handler's
	// own RFC 3339 time with milliseconds (controller-runtime defaults to
	// RFC 3339 with seconds; set RFC3339TimeEncoder for that).
	TimeEncoder TimeEncoder
	// AddSource writes the caller (zap's AddCaller).
	AddSource bool
	// HandlerOptions, when set, supplies the other asyncbus settings
	// (capacity, overflow, latency, rules, ...). Level, AddSource, Format
	// and the time encoding are set from this Options on top; SyncLevel
	// defaults to Error (not asyncbus's Fatal).
	// HandlerOptions, when set, supplies the other asyncbus settings
	// (capacity, overflow, latency, rules, ...). Level, AddSource, Format
	// and the time encoding are set from this Options on top; a nil
	// SyncLevel becomes Error (asyncbus's own default is Fatal).
	HandlerOptions *asyncbus.Options
	// LoggerOptions are passed to NewLogger after the drop-in's own.
	LoggerOptions []Option
}

// Opts changes Options, like controller-runtime's zap.Opts.
type Opts func(*Options)

// UseDevMode sets Options.Development.
func UseDevMode(enabled bool) Opts {
	return func(o *Options) { o.Development = enabled }
}

// WriteTo sets Options.DestWriter.
func WriteTo(out io.Writer) Opts {
	return func(o *Options) { o.DestWriter = out }
}

// JSONEncoder selects JSON output.
func JSONEncoder() func(o *Options) {
	return func(o *Options) { o.Encoding = EncodingJSON }
}

// ConsoleEncoder selects the human-readable console output.
func ConsoleEncoder() func(o *Options) {
	return func(o *Options) { o.Encoding = EncodingConsole }
}

// Level sets Options.Level. As with zap, V(n) corresponds to level -n: to
// enable V(3), pass slog.Level(-3).
func Level(level slog.Leveler) func(o *Options) {
	return func(o *Options) { o.Level = level }
}

// StacktraceLevel sets Options.StacktraceLevel.
func StacktraceLevel(level slog.Leveler) func(o *Options) {
	return func(o *Options) { o.StacktraceLevel = level }
}

// UseFlagOptions replaces the options with those parsed from the flags bound
// by BindFlags.
//
//	opts := logrbridge.Options{}
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	log := logrbridge.New(logrbridge.UseFlagOptions(&opts))
func UseFlagOptions(in *Options) Opts {
	return func(o *Options) { *o = *in }
}

// addDefaults fills what controller-runtime's addDefaults fills.
func (o *Options) addDefaults(stderr io.Writer) {
	if o.DestWriter == nil {
		o.DestWriter = stderr
	}
	if o.Development {
		if o.Encoding == "" {
			o.Encoding = EncodingConsole
		}
		if o.Level == nil {
			o.Level = ZapDebugLevel
		}
		if o.StacktraceLevel == nil {
			o.StacktraceLevel = ZapWarnLevel
		}
	} else {
		if o.Encoding == "" {
			o.Encoding = EncodingJSON
		}
		if o.Level == nil {
			o.Level = ZapInfoLevel
		}
		if o.StacktraceLevel == nil {
			o.StacktraceLevel = ZapErrorLevel
		}
	}
}

// BindFlags registers the controller-runtime zap flags on fs, with the same
// names, values, help texts and error messages:
//   - zap-devel: development mode defaults (console, V(1), stack traces at Warn)
//     or production (JSON, Info, stack traces at Error)
//   - zap-encoder: 'json' or 'console'
//   - zap-log-level: 'debug', 'info', 'error', 'panic' or an integer > 0 (V level)
//   - zap-stacktrace-level: 'info', 'error' or 'panic'
//   - zap-time-encoding: 'epoch', 'millis', 'nanos', 'iso8601', 'rfc3339' or 'rfc3339nano'
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Development, "zap-devel", o.Development,
		"Development Mode defaults(encoder=consoleEncoder,logLevel=Debug,stackTraceLevel=Warn). "+
			"Production Mode defaults(encoder=jsonEncoder,logLevel=Info,stackTraceLevel=Error)")

	encVal := encoderFlag{setFunc: func(e string) { o.Encoding = e }}
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
	"debug": ZapDebugLevel,
	"info":  ZapInfoLevel,
	"error": ZapErrorLevel,
	"panic": ZapPanicLevel,
}

var stackLevelStrings = map[string]slog.Level{
	"info":  ZapInfoLevel,
	"error": ZapErrorLevel,
	"panic": ZapPanicLevel,
}

type encoderFlag struct {
	setFunc func(string)
	value   string
}

var _ flag.Value = &encoderFlag{}

func (ev *encoderFlag) String() string { return ev.value }

// Type names the value for pflag.
func (ev *encoderFlag) Type() string { return "encoder" }

func (ev *encoderFlag) Set(flagValue string) error {
	val := strings.ToLower(flagValue)
	switch val {
	case EncodingJSON, EncodingConsole:
		ev.setFunc(val)
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
		level = slog.Level(-logLevel)
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

// timeReplacer returns a ReplaceAttr applying enc to the top-level time key.
func timeReplacer(enc TimeEncoder) func([]string, slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
			a.Value = enc(a.Value.Time())
		}
		return a
	}
}
