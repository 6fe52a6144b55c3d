// Package zap is a drop-in replacement for
// sigs.k8s.io/controller-runtime/pkg/log/zap backed by an asyncbus handler:
// a kubebuilder scaffold builds and runs when its import path changes and
// main gains one line, the deferred Flush (required: see Exit):
//
//	import (
//		"github.com/asyncbus/asyncbus/logrbridge"
//		"github.com/asyncbus/asyncbus/logrbridge/zap"
//	)
//
//	opts := zap.Options{Development: true}
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
//	defer logrbridge.Flush(ctrl.Log) // write every line before main returns
//
// Its output is controller-runtime's (zap's production JSON or
// development console layout, zap's level names, every --zap-* flag), apart
// from timestamps and callers. Values follow zapr's and zap's rules (see
// logrbridge.Zapr): a String or Error method called on a nil pointer gives
// "<nil>", one that panics otherwise (or a panicking MarshalLog) KEY+"Error"
// with "PANIC=…", V levels above 127 are V(127), and a nil Kubernetes
// object in production is {} with KEY+"Error" "got nil for runtime.Object".
// Misuse gives zapr's DPanic line: an odd number of key/value arguments
// ("ignored key"), a key that is not a string ("invalid key"; the later
// arguments are dropped) or a zap.Field in a key's place, at level dpanic
// with a stack trace, before the record. The package does not import
// go.uber.org/zap.
//
// # Exit
//
// Lines are written by a goroutine of their own, so a program that
// returns from main must flush first: the deferred
// logrbridge.Flush(ctrl.Log) above, which reaches the handler through
// controller-runtime's delegating ctrl.Log. Without it, a manager that
// logs busily until it stops loses its last lines (thousands of 20,001
// in the scaffold test, where 8 goroutines log 2,500 lines each). Records at Error and above are written before Error
// returns, so the scaffold's error before os.Exit(1), which runs no
// deferred call, is kept; so are the lines of a program that logs little
// (while it is quiet, each call waits briefly for its line's write). Nothing can flush
// automatically: Go runs no code when main returns, and the signal
// context that stops the manager belongs to controller-runtime, which
// this module does not import.
//
// Each New starts an asyncbus handler: a drainer goroutine and asyncbus's
// 8 MiB ring. Like a dropped controller-runtime logger, which leaves
// nothing behind, it is closed (what is queued is written, the drainer
// stops, the ring is freed) once the logger and every logger derived from
// it are unreachable, after a garbage collection: a logger per test costs
// nothing once the test is done. The ring stays at asyncbus's size: with a
// 1 MiB ring, a program that logged from 8 goroutines and exited without a
// Flush lost more of its last lines than with 8 MiB.
//
// # What differs from controller-runtime's package
//
//   - Types: levels are [log/slog.Leveler]s (V(n) is slog level -n; see
//     [DebugLevel] and friends), and [Level] and [StacktraceLevel] also
//     take zapcore's levels, so zap.Level(zapcore.DebugLevel) compiles
//     unchanged. Encoders are [Encoding] values (zap's JSON and console
//     encoders, configured by [EncoderConfig]), time encoders are
//     [TimeEncoder] values, and [RawZapOpts] takes this package's
//     [ZapOption]s ([AddCaller], [WithCaller], [AddCallerSkip]). These forms
//     change: zap.RawZapOpts(uzap.AddCaller()) becomes
//     zap.RawZapOpts(zap.AddCaller()); TimeEncoder: zapcore.ISO8601TimeEncoder
//     becomes zap.ISO8601TimeEncoder (and so for each time encoder); an
//     Encoder or NewEncoder built with zapcore becomes zap.NewJSONEncoder or
//     zap.NewConsoleEncoder with EncoderConfigOptions; Options.Level and
//     StacktraceLevel set as fields take slog levels. Code that uses the
//     flags and the other functional options does not change. NewRaw, which
//     returns a *zap.Logger, does not exist.
//   - Nothing is sampled: production zap keeps the first 100 lines per
//     second with the same message and then every 100th; asyncbus keeps them
//     all and handles overload with its own policy (see asyncbus.Options).
//   - Development mode does not panic on logr misuse: controller-runtime
//     sets zap.Development, so its DPanic line is followed by a panic that
//     ends the program; the drop-in writes the same line and then the
//     record with the pairs zapr keeps, as in production. A log call must
//     not take a program down, and the DPanic line keeps the misuse
//     visible.
//   - In production, Kubernetes objects given to WithValues are written as
//     {apiVersion, kind, namespace, name} like those of the log call;
//     controller-runtime's encoder converts only the log call's fields
//     and writes objects from WithValues in full (their String()). An
//     object under the empty key "" has its fields written in place of
//     the key rather than under "".
//   - The exit: see Exit above.
package zap

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"

	"github.com/go-logr/logr"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// zap's levels as slog levels: logr's V(n) is zap level -n and slog level
// -n; the levels above Info keep their order.
const (
	DebugLevel  = slog.Level(-1)
	InfoLevel   = slog.LevelInfo
	WarnLevel   = slog.LevelWarn
	ErrorLevel  = slog.LevelError
	DPanicLevel = slog.LevelError + 1
	PanicLevel  = slog.LevelError + 2
	FatalLevel  = encode.LevelFatal
)

// TimeEncoder is one of zapcore's time encodings, or a layout. The zero
// value is RFC3339TimeEncoder, controller-runtime's default.
type TimeEncoder struct {
	enc    encode.ZapTime
	layout string // TimeEncoderOfLayout; "" otherwise
}

// The time encoders selected by --zap-time-encoding, encoding like the
// zapcore encoders of the same names.
var (
	// EpochTimeEncoder writes float seconds since the epoch.
	EpochTimeEncoder = TimeEncoder{enc: encode.ZapTimeEpoch}
	// EpochMillisTimeEncoder writes float milliseconds since the epoch.
	EpochMillisTimeEncoder = TimeEncoder{enc: encode.ZapTimeMillis}
	// EpochNanosTimeEncoder writes integer nanoseconds since the epoch.
	EpochNanosTimeEncoder = TimeEncoder{enc: encode.ZapTimeNanos}
	// ISO8601TimeEncoder writes "2006-01-02T15:04:05.000Z0700".
	ISO8601TimeEncoder = TimeEncoder{enc: encode.ZapTimeISO8601}
	// RFC3339TimeEncoder writes time.RFC3339.
	RFC3339TimeEncoder = TimeEncoder{enc: encode.ZapTimeRFC3339}
	// RFC3339NanoTimeEncoder writes time.RFC3339Nano.
	RFC3339NanoTimeEncoder = TimeEncoder{enc: encode.ZapTimeRFC3339Nano}
)

// TimeEncoderOfLayout writes the time with layout, as
// zapcore.TimeEncoderOfLayout. The three layouts above take their fast
// paths; any other costs a time.Format per record.
func TimeEncoderOfLayout(layout string) TimeEncoder {
	switch layout {
	case "2006-01-02T15:04:05Z07:00":
		return RFC3339TimeEncoder
	case "2006-01-02T15:04:05.999999999Z07:00":
		return RFC3339NanoTimeEncoder
	case "2006-01-02T15:04:05.000Z0700":
		return ISO8601TimeEncoder
	}
	return TimeEncoder{layout: layout}
}

// EncoderConfig is the part of zapcore.EncoderConfig that the drop-in
// honours; the keys and level and duration encodings are those of zap's
// production config (JSON) and development config (console).
type EncoderConfig struct {
	// EncodeTime is the time encoding; controller-runtime sets it from
	// Options.TimeEncoder.
	EncodeTime TimeEncoder
}

// EncoderConfigOption changes an EncoderConfig.
type EncoderConfigOption func(*EncoderConfig)

// Encoding is an output encoding: made by NewJSONEncoder or
// NewConsoleEncoder.
type Encoding interface {
	format() (encode.Format, string)
}

type encoding struct {
	console bool
	cfg     EncoderConfig
}

// format returns the encode format and, for a layout time encoder, the layout.
func (e *encoding) format() (encode.Format, string) {
	f := encode.ZapJSON
	if e.console {
		f = encode.ZapConsole
	}
	// WithZapLevels: the DPanic lines of logr misuse are named "dpanic";
	// WithLogrLevels: V levels are named as zapr and zap name them.
	return f.WithZapTime(e.cfg.EncodeTime.enc).WithZapLevels().WithLogrLevels(), e.cfg.EncodeTime.layout
}

// NewEncoderFunc makes an Encoding from config options.
type NewEncoderFunc func(...EncoderConfigOption) Encoding

// NewJSONEncoder returns zap's JSON encoding with the production encoder
// config (keys level, ts, logger, caller, msg, stacktrace; lower-case
// levels; durations in float seconds), changed by opts.
func NewJSONEncoder(opts ...EncoderConfigOption) Encoding {
	e := &encoding{}
	for _, o := range opts {
		o(&e.cfg)
	}
	return e
}

// NewConsoleEncoder returns zap's console encoding with the development
// encoder config (capital levels, durations as strings), changed by opts.
func NewConsoleEncoder(opts ...EncoderConfigOption) Encoding {
	e := &encoding{console: true}
	for _, o := range opts {
		o(&e.cfg)
	}
	return e
}

// ZapOption is the drop-in's counterpart of the zap.Option values that mean
// something for it; pass them with RawZapOpts.
type ZapOption func(*rawOpts)

type rawOpts struct {
	caller     bool
	callerSkip int
}

// AddCaller writes the caller (zap.AddCaller).
func AddCaller() ZapOption { return WithCaller(true) }

// WithCaller sets whether the caller is written (zap.WithCaller).
func WithCaller(enabled bool) ZapOption { return func(r *rawOpts) { r.caller = enabled } }

// AddCallerSkip skips n more frames when finding the caller and the start
// of stack traces (zap.AddCallerSkip).
func AddCallerSkip(n int) ZapOption { return func(r *rawOpts) { r.callerSkip += n } }

// Options mirrors controller-runtime's zap.Options; HandlerOptions and
// LoggerOptions are asyncbus additions.
type Options struct {
	// Development selects development defaults: the console encoder, V(1)
	// enabled (zap's Debug), stack traces at Warn and above, Kubernetes
	// objects logged in full. Otherwise: JSON, Info, stack traces at Error
	// and above, objects as {apiVersion, kind, namespace, name}.
	Development bool
	// Encoder is the encoding; when nil, NewEncoder makes it.
	Encoder Encoding
	// EncoderConfigOptions are given to NewEncoder, after the option that
	// sets the time encoder from TimeEncoder.
	EncoderConfigOptions []EncoderConfigOption
	// NewEncoder makes the Encoder when it is nil: by default
	// NewConsoleEncoder in development, NewJSONEncoder otherwise.
	NewEncoder NewEncoderFunc
	// DestWriter is where logs go; default os.Stderr.
	DestWriter io.Writer
	// Level is the minimum enabled level; V(n) is level -n. Default:
	// DebugLevel in development, InfoLevel otherwise.
	Level slog.Leveler
	// StacktraceLevel is the level at and above which a stack trace is
	// written. Default: WarnLevel in development, ErrorLevel otherwise.
	StacktraceLevel slog.Leveler
	// ZapOpts are the RawZapOpts.
	ZapOpts []ZapOption
	// TimeEncoder is the time encoding when NewEncoder makes the encoder
	// (the zero value is RFC3339TimeEncoder, controller-runtime's default).
	TimeEncoder TimeEncoder
	// HandlerOptions, when set, supplies the other asyncbus settings
	// (capacity, overflow, latency, rules, ...). Level, Format, AddSource
	// are set from these Options on top, and a nil SyncLevel becomes
	// ErrorLevel (asyncbus's own default is Fatal). The ring is
	// asyncbus's 8 MiB unless Capacity says otherwise (see the package
	// documentation on why not less).
	HandlerOptions *asyncbus.Options
	// LoggerOptions are passed to logrbridge.NewLogger after the drop-in's own.
	LoggerOptions []logrbridge.Option
	// invalid holds what Level and StacktraceLevel could not read (nil
	// for what they could), reported by New.
	invalid []error
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

// Encoder sets Options.Encoder.
func Encoder(encoder Encoding) func(o *Options) {
	return func(o *Options) { o.Encoder = encoder }
}

// JSONEncoder selects zap's JSON encoding with the production config,
// changed by opts.
func JSONEncoder(opts ...EncoderConfigOption) func(o *Options) {
	return func(o *Options) { o.Encoder = NewJSONEncoder(opts...) }
}

// ConsoleEncoder selects zap's console encoding with the development
// config, changed by opts.
func ConsoleEncoder(opts ...EncoderConfigOption) func(o *Options) {
	return func(o *Options) { o.Encoder = NewConsoleEncoder(opts...) }
}

// Level sets Options.Level. As with zap, V(n) is level -n: to enable V(3),
// pass slog.Level(-3) or zapcore.Level(-3). It takes a slog.Leveler, or a
// zapcore.Level or zap.AtomicLevel as scaffolds pass them
// (zap.Level(zapcore.DebugLevel)), read by name; an AtomicLevel is read
// once. A value of another kind is reported on standard error (or
// HandlerOptions.OnError) when New runs, and the default level is used.
func Level(level fmt.Stringer) func(o *Options) {
	return func(o *Options) {
		l, err := leveler(level)
		o.Level, o.invalid = l, append(o.invalid, err)
	}
}

// StacktraceLevel sets Options.StacktraceLevel. It takes the same values
// as Level (zap.StacktraceLevel(zapcore.PanicLevel) included).
func StacktraceLevel(stacktraceLevel fmt.Stringer) func(o *Options) {
	return func(o *Options) {
		l, err := leveler(stacktraceLevel)
		o.StacktraceLevel, o.invalid = l, append(o.invalid, err)
	}
}

// RawZapOpts appends to Options.ZapOpts.
func RawZapOpts(zapOpts ...ZapOption) func(o *Options) {
	return func(o *Options) { o.ZapOpts = append(o.ZapOpts, zapOpts...) }
}

// UseFlagOptions replaces the options with those parsed from the flags
// bound by BindFlags.
func UseFlagOptions(in *Options) Opts {
	return func(o *Options) { *o = *in }
}

// addDefaults fills what controller-runtime's addDefaults fills (except
// sampling, see the package doc).
func (o *Options) addDefaults(stderr io.Writer) {
	if o.DestWriter == nil {
		o.DestWriter = stderr
	}
	if o.Development {
		if o.NewEncoder == nil {
			o.NewEncoder = NewConsoleEncoder
		}
		if o.Level == nil {
			o.Level = DebugLevel
		}
		if o.StacktraceLevel == nil {
			o.StacktraceLevel = WarnLevel
		}
	} else {
		if o.NewEncoder == nil {
			o.NewEncoder = NewJSONEncoder
		}
		if o.Level == nil {
			o.Level = InfoLevel
		}
		if o.StacktraceLevel == nil {
			o.StacktraceLevel = ErrorLevel
		}
	}
	te := o.TimeEncoder
	o.EncoderConfigOptions = append([]EncoderConfigOption{func(c *EncoderConfig) { c.EncodeTime = te }}, o.EncoderConfigOptions...)
	if o.Encoder == nil {
		o.Encoder = o.NewEncoder(o.EncoderConfigOptions...)
	}
}

// New returns a logger built from opts like controller-runtime's zap.New,
// writing through an asyncbus handler. The handler is closed (what is
// queued is written, its goroutines stop and its ring is freed) once the
// logger and every logger derived from it are unreachable, as a dropped
// controller-runtime logger leaves nothing behind; see
// logrbridge.CloseWhenUnreachable. ctrl.SetLogger keeps its logger for
// good.
func New(opts ...Opts) logr.Logger {
	l, _ := newLogger(true, opts...)
	return l
}

// NewWithHandler is New that also returns the asyncbus handler behind the
// logger, for Stats, Flush and Close. The caller closes the handler: it is
// not closed when the loggers are dropped.
func NewWithHandler(opts ...Opts) (logr.Logger, *asyncbus.Handler) {
	return newLogger(false, opts...)
}

// newLogger builds New's logger and handler; closeDropped closes the
// handler once the loggers are unreachable.
func newLogger(closeDropped bool, opts ...Opts) (logr.Logger, *asyncbus.Handler) {
	o := &Options{}
	for _, opt := range opts {
		opt(o)
	}
	o.addDefaults(os.Stderr)
	var raw rawOpts
	for _, z := range o.ZapOpts {
		z(&raw)
	}
	var ao asyncbus.Options
	if o.HandlerOptions != nil {
		ao = *o.HandlerOptions
	}
	format, layout := o.Encoder.format()
	ao.Format = format
	ao.Level = o.Level
	ao.AddSource = raw.caller
	if ao.SyncLevel == nil {
		ao.SyncLevel = ErrorLevel
	}
	if layout != "" {
		ao.ReplaceAttr = chainReplace(layoutReplacer(layout), ao.ReplaceAttr)
	}
	h := asyncbus.NewHandler(o.DestWriter, &ao)
	if err := errors.Join(o.invalid...); err != nil {
		if ao.OnError != nil {
			ao.OnError(err)
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	lopts := []logrbridge.Option{
		logrbridge.StackTraces(o.StacktraceLevel),
		logrbridge.ErrorAfterValues(true),
		logrbridge.KeepErrors(true), // the encoding writes zap's errorVerbose
		logrbridge.RecordCaller(raw.caller),
		logrbridge.Zapr(true),
		logrbridge.CloseWhenUnreachable(closeDropped),
	}
	if !o.Development {
		lopts = append(lopts, logrbridge.FieldConverter(kubeObjectField))
	}
	l := logrbridge.NewLogger(h, append(lopts, o.LoggerOptions...)...)
	if raw.callerSkip != 0 {
		l = l.WithCallDepth(raw.callerSkip)
	}
	return l, h
}

// layoutReplacer formats the record time (the top-level time built-in)
// with layout; the zap encodings write a string time as it is.
func layoutReplacer(layout string) func([]string, slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if groups == nil && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
			a.Value = slog.StringValue(a.Value.Time().Format(layout))
		}
		return a
	}
}

// chainReplace applies first, then the user's second (when set).
func chainReplace(first, second func([]string, slog.Attr) slog.Attr) func([]string, slog.Attr) slog.Attr {
	if second == nil {
		return first
	}
	return func(groups []string, a slog.Attr) slog.Attr {
		return second(groups, first(groups, a))
	}
}

// objectMeta is what apimachinery's meta.Accessor needs of an object.
type objectMeta interface {
	GetName() string
	GetNamespace() string
}

// nilObjectError is the error controller-runtime's production encoder
// writes, under KEY+"Error", for a nil Kubernetes object.
const nilObjectError = "got nil for runtime.Object"

// kubeObjectField renders a Kubernetes object (a runtime.Object with object
// metadata) under key as controller-runtime's production KubeAwareEncoder
// does: {"apiVersion":…,"kind":…} when the object's GroupVersionKind has a
// version, then "namespace" when not empty, then "name"; a nil object is
// an empty object and KEY+"Error". The methods are found by constant name,
// so the linker keeps no other methods alive.
func kubeObjectField(key string, v any) (slog.Attr, bool) {
	meta, ok := v.(objectMeta)
	if !ok {
		return slog.Attr{}, false
	}
	if _, isErr := v.(error); isErr {
		return slog.Attr{}, false // zap encodes errors as errors, not objects
	}
	rv := reflect.ValueOf(v)
	getKind := rv.MethodByName("GetObjectKind")
	if !getKind.IsValid() || !rv.MethodByName("DeepCopyObject").IsValid() || getKind.Type().NumIn() != 0 || getKind.Type().NumOut() != 1 {
		return slog.Attr{}, false
	}
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		// Two fields in place of the pair: a group with an empty key is
		// inlined. struct{}{} is encoded as {}.
		return slog.Attr{Value: slog.GroupValue(slog.Any(key, struct{}{}), slog.String(key+"Error", nilObjectError))}, true
	}
	attrs := make([]slog.Attr, 0, 4)
	if kind := getKind.Call(nil)[0]; kind.Kind() == reflect.Interface && !kind.IsNil() {
		if gvkFn := kind.MethodByName("GroupVersionKind"); gvkFn.IsValid() && gvkFn.Type().NumIn() == 0 && gvkFn.Type().NumOut() == 1 {
			gvk := gvkFn.Call(nil)[0]
			if gvk.Kind() == reflect.Struct {
				group, version, kindName := stringField(gvk, "Group"), stringField(gvk, "Version"), stringField(gvk, "Kind")
				if version != "" {
					apiVersion := version
					if group != "" {
						apiVersion = group + "/" + version
					}
					attrs = append(attrs, slog.String("apiVersion", apiVersion), slog.String("kind", kindName))
				}
			}
		}
	}
	if ns := meta.GetNamespace(); ns != "" {
		attrs = append(attrs, slog.String("namespace", ns))
	}
	attrs = append(attrs, slog.String("name", meta.GetName()))
	return slog.Attr{Key: key, Value: slog.GroupValue(attrs...)}, true
}

func stringField(v reflect.Value, name string) string {
	f := v.FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}
