package logrbridge

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/go-logr/logr"

	"github.com/asyncbus/asyncbus/internal/stack"
)

// DefaultErrorKey is the key under which Logger.Error writes its error.
const DefaultErrorKey = "error"

// DefaultNameKey is the key under which the logger's name is written.
const DefaultNameKey = "logger"

// DefaultNameSeparator joins the names given to WithName, like zapr and klog.
const DefaultNameSeparator = "."

// DefaultStacktraceKey is the key of the stack trace added by [StackTraces].
const DefaultStacktraceKey = "stacktrace"

// MissingValue is the value written for a final key that has no value.
const MissingValue = "(MISSING)"

// Option configures [NewLogger].
type Option func(*config)

type config struct {
	errorKey   string
	nameKey    string
	nameSep    string
	nameKeySet bool
	namer      func(h slog.Handler, name string) slog.Handler
	noPC       bool
	shrink     bool
	stackLevel slog.Leveler
	stackKey   string
	onError    func(error)
	errorLast  bool
	keepErrors bool
	zapr       bool
	convert    func(key string, v any) (slog.Attr, bool)
	closeDrop  bool
}

// ErrorKey sets the key under which Logger.Error writes its error (default "error").
func ErrorKey(key string) Option { return func(c *config) { c.errorKey = key } }

// NameKey sets the key under which the logger name is written (default "logger").
// Setting it also disables the handler's native naming (see [Namer]).
func NameKey(key string) Option {
	return func(c *config) { c.nameKey = key; c.nameKeySet = true }
}

// NameSeparator sets the string joining nested names (default ".").
func NameSeparator(sep string) Option { return func(c *config) { c.nameSep = sep } }

// Namer makes the sink name its handler with fn(root, fullName) instead of
// adding the name attribute itself. root is the handler given to NewLogger and
// fullName the names joined with the separator; the handler returned must
// write the name. asyncbus handlers are named with their Named method by
// default, so that per-logger level rules apply to logr names.
func Namer(fn func(root slog.Handler, fullName string) slog.Handler) Option {
	return func(c *config) { c.namer = fn }
}

// RecordCaller sets whether records carry the program counter of the logging
// call (default true), so that a handler with AddSource prints the caller.
// Turning it off saves a runtime.Callers call per record.
func RecordCaller(on bool) Option { return func(c *config) { c.noPC = !on } }

// ShrinkObjects makes values that have GetName() string and GetNamespace() string
// methods (Kubernetes objects) render as {"name":…,"namespace":…} instead of
// in full, like controller-runtime's production encoder does.
func ShrinkObjects(on bool) Option { return func(c *config) { c.shrink = on } }

// StackTraces adds a stack trace of the logging goroutine, under key
// "stacktrace", to every record at or above level (nil: never, the default).
// The trace starts at the logging call.
func StackTraces(level slog.Leveler) Option { return func(c *config) { c.stackLevel = level } }

// StacktraceKey sets the key used by [StackTraces] (default "stacktrace").
func StacktraceKey(key string) Option { return func(c *config) { c.stackKey = key } }

// ErrorAfterValues writes Logger.Error's error after the key/value pairs
// instead of before them, as zapr does (default false).
func ErrorAfterValues(on bool) Option { return func(c *config) { c.errorLast = on } }

// KeepErrors hands errors to the handler as error values (slog.Any)
// instead of their Error() text, both Logger.Error's error and error
// values among the key/value pairs, where an error is taken as an error
// even when it is also a fmt.Stringer (zap.Any's order). A handler can
// then render more than the text (the zap encodings add zap's
// "errorVerbose" for errors that format themselves, like pkg/errors).
// Default false.
func KeepErrors(on bool) Option { return func(c *config) { c.keepErrors = on } }

// ValueConverter gives fn the first look at every logr value that is not a
// plain string, number, bool, time or duration: when it reports true its
// value is used as is. It replaces [ShrinkObjects] and, like
// [FieldConverter], the converter set before it.
func ValueConverter(fn func(v any) (slog.Value, bool)) Option {
	return func(c *config) {
		c.convert = func(key string, v any) (slog.Attr, bool) {
			val, ok := fn(v)
			return slog.Attr{Key: key, Value: val}, ok
		}
	}
}

// FieldConverter is [ValueConverter] that also gets the key and returns the
// whole attribute written in place of the pair. A group attribute with an
// empty key writes its attributes in place of the pair (slog handlers and
// the zap encodings inline such groups): one value may become several
// fields (the drop-in package writes controller-runtime's "pod":{} and
// "podError" for a nil Kubernetes object this way). It replaces
// [ShrinkObjects] and the converter set before it.
func FieldConverter(fn func(key string, v any) (slog.Attr, bool)) Option {
	return func(c *config) { c.convert = fn }
}

// Zapr makes the logger treat levels and values as go-logr/zapr and
// go.uber.org/zap do where that differs from the defaults (see the package
// documentation), for handlers that write zap's output (the drop-in
// package sets it):
//   - V levels above 127 are V(127) (zap levels are int8), in Enabled and
//     in the record's level;
//   - a MarshalLog that panics gives the key KEY+"Error" with the value
//     "PANIC=<panic>" in place of the pair;
//   - an error (also one that is a fmt.Stringer, zap.Any's order) and a
//     fmt.Stringer are written as their text, and when the method panics
//     on a nil pointer (a nil pointer to a value receiver, a method that
//     does not guard against nil) as "<nil>"; any other panic gives
//     KEY+"Error" with "PANIC=<panic>" in place of the pair. With
//     [KeepErrors], errors are handed over as errors and the handler
//     renders them (the zap encodings follow the same rules);
//   - logr misuse writes zapr's DPanic line first, at level Error+1 with
//     the call's pc and, when the [StackTraces] level allows, a stack
//     trace: an odd number of arguments ("odd number of arguments passed
//     as key-value pairs for logging", the last under "ignored key"), a
//     key that is not a string ("non-string key argument passed to
//     logging, ignoring all later arguments", under "invalid key") or a
//     zap.Field in a key's place; the record keeps the pairs before the
//     bad argument. In WithValues the line goes to the parent's handler.
//     Nothing panics;
//   - values reach the handler as zap.Any sees them: a MarshalLog result
//     as it is (no name/namespace group), a float32 as the float64 with
//     its shortest digits, a ("", nil) pair as "":null, and pointers to
//     times and durations as they are (not their String);
//   - an empty WithName changes nothing, as with zap's Named, and slog
//     records at Error+1 to Error+3 are at Error, as zapr's slog handler
//     maps them.
//
// Default false.
func Zapr(on bool) Option { return func(c *config) { c.zapr = on } }

// maxZapV is the highest V level zapr hands to zap: zapcore.Level is an
// int8, so zapr's toZapLevel caps V at 127.
const maxZapV = 127

// CloseWhenUnreachable closes the handler (its Close() error method, which
// for asyncbus handlers writes what is queued and stops the drainer) once
// the logger returned by NewLogger and every logger derived from it (With*,
// V, logr.ToSlogHandler and slog loggers on top of it, controller-runtime's
// ctrl.Log after SetLogger) are unreachable, so that a logger made and
// dropped, one per test say, leaves no goroutine or ring behind. Records
// logged before are not lost: closing flushes them. It runs on a goroutine
// of its own, some time after a garbage collection finds the loggers gone
// (never at program exit: flush or close before exiting as usual). A
// slog.Handler returned by [Handler] does not keep the handler open, nor
// does the handler itself: use NewLogger without this option when the
// handler outlives its loggers. Anything the handler references (an
// OnError callback, the output) must not reference the loggers, or they
// are never unreachable. Without a Close method nothing is done. Default
// false.
func CloseWhenUnreachable(on bool) Option { return func(c *config) { c.closeDrop = on } }

// OnHandleError receives the errors the handler returns from Handle (logr's
// API has no way to return them). By default they are ignored: asyncbus
// handlers count them in their Stats.
func OnHandleError(fn func(error)) Option { return func(c *config) { c.onError = fn } }

// NewLogger returns a logr.Logger writing into h. Its sink implements
// logr.LogSink, logr.CallDepthLogSink and logr.SlogSink, so
// logr.FromSlogHandler(logr.ToSlogHandler(l)) gives back the same sink and V.
func NewLogger(h slog.Handler, opts ...Option) logr.Logger {
	cfg := &config{
		errorKey: DefaultErrorKey,
		nameKey:  DefaultNameKey,
		nameSep:  DefaultNameSeparator,
		stackKey: DefaultStacktraceKey,
	}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.namer == nil && !cfg.nameKeySet {
		cfg.namer = nativeNamer(h)
	}
	s := &sink{cfg: cfg, root: h, h: h}
	if c, ok := h.(closer); ok && cfg.closeDrop {
		s.life = &lifeline{h: c}
		// The cleanup's argument is the handler, which does not reference
		// the lifeline: only sinks do, so it runs once the last is gone.
		// Close stops it (the handler is closed once, not again later).
		s.life.cleanup = runtime.AddCleanup(s.life, closeDropped, c)
	}
	return logr.New(s)
}

type closer interface{ Close() error }

// lifeline is shared by the sink NewLogger made with CloseWhenUnreachable
// and every sink derived from it (each With* copies the pointer), and
// referenced by nothing else: neither the handler nor its goroutines point
// to it, so it becomes unreachable exactly when the last of those sinks
// does. It holds the handler only to be a pointer-bearing allocation (the
// runtime may batch tiny pointer-free objects, delaying their cleanups).
type lifeline struct {
	h       closer
	cleanup runtime.Cleanup // stopped by Close
}

// closeDropped closes the handler of loggers that are all gone, on a
// goroutine of its own: Close waits for the output, and a cleanup that
// blocks would hold up the runtime's other cleanups.
func closeDropped(h closer) {
	go func() { _ = h.Close() }() // asyncbus reports output failures through OnError itself
}

// op is one WithValues/WithAttrs (attrs) or WithGroup (group) step, kept so
// that WithName can rebuild the handler with the name attribute first.
type op struct {
	attrs []slog.Attr
	group string
}

// sink is immutable once built (Init excepted, see there): every With*
// returns a new sink, so it is safe for concurrent use.
type sink struct {
	cfg       *config
	root      slog.Handler // the handler given to NewLogger
	h         slog.Handler // root + name + ops, what records go to
	name      string
	ops       []op
	infoDepth int       // logr.RuntimeInfo.CallDepth
	depth     int       // sum of WithCallDepth calls; may be negative
	life      *lifeline // CloseWhenUnreachable: nil otherwise
	// ctx is what Enabled and the records go to the handler with (set by
	// WithContext, context.go); nil: context.Background().
	ctx context.Context
}

var (
	_ logr.LogSink          = (*sink)(nil)
	_ logr.CallDepthLogSink = (*sink)(nil)
	_ logr.SlogSink         = (*sink)(nil)
)

// Init implements logr.LogSink. logr calls it from logr.New, also when
// FromSlogHandler wraps an existing sink again; it only writes when the value
// changes (logr always passes CallDepth 1), so concurrent round trips do not
// race.
func (s *sink) Init(info logr.RuntimeInfo) {
	if s.infoDepth != info.CallDepth {
		s.infoDepth = info.CallDepth
	}
}

// Enabled implements logr.LogSink: V(level) is slog level -level.
func (s *sink) Enabled(level int) bool {
	return s.h.Enabled(s.context(), s.cfg.vLevel(level))
}

// Info implements logr.LogSink.
func (s *sink) Info(level int, msg string, keysAndValues ...any) {
	s.log(s.cfg.vLevel(level), nil, msg, keysAndValues)
}

// vLevel is the slog level of V(level): -level, with V at most 127 in
// Zapr mode.
func (c *config) vLevel(level int) slog.Level {
	if c.zapr && level > maxZapV {
		level = maxZapV
	}
	return slog.Level(-level)
}

// Error implements logr.LogSink. The record is at slog.LevelError whatever V.
func (s *sink) Error(err error, msg string, keysAndValues ...any) {
	if !s.h.Enabled(s.context(), slog.LevelError) {
		return
	}
	s.log(slog.LevelError, err, msg, keysAndValues)
}

// callerSkip is the runtime.Callers skip reaching logr.Logger's caller from log:
// runtime.Callers, log, Info/Error, then infoDepth frames of logr.
const callerSkip = 3

// maxStack bounds the frames written by StackTraces.
const maxStack = stack.MaxFrames

func (s *sink) log(level slog.Level, err error, msg string, kv []any) {
	var misuse zaprMisuse
	if s.cfg.zapr {
		kv, misuse = s.cfg.zaprArgs(kv)
	}
	// runtime.Callers is called here, not through callSite: one frame
	// fewer to walk on every call.
	var pc uintptr
	var stack string
	skip := max(callerSkip+s.infoDepth+s.depth, 0)
	if s.stackAt(level) || misuse.msg != "" && s.stackAt(zapDPanicLevel) {
		var pcs [maxStack]uintptr
		n := runtime.Callers(skip, pcs[:])
		if n > 0 {
			pc = pcs[0]
		}
		stack = formatStack(pcs[:n])
	} else if !s.cfg.noPC {
		var pcs [1]uintptr
		runtime.Callers(skip, pcs[:])
		pc = pcs[0]
	}
	if misuse.msg != "" {
		s.writeMisuse(s.h, misuse, pc, stack) // zapr writes it first
	}
	r := slog.NewRecord(time.Now(), level, msg, pc)
	if err != nil && !s.cfg.errorLast {
		r.AddAttrs(s.cfg.errorAttr(err))
	}
	s.cfg.addKVs(&r, kv)
	if err != nil && s.cfg.errorLast {
		r.AddAttrs(s.cfg.errorAttr(err))
	}
	if stack != "" && s.stackAt(level) {
		r.AddAttrs(slog.String(s.cfg.stackKey, stack))
	}
	if herr := s.h.Handle(s.context(), r); herr != nil && s.cfg.onError != nil {
		s.cfg.onError(herr)
	}
	// The sink, and so its lifeline, stays reachable until Handle has
	// returned: a logger dropped right after the call (New(...).Info(...))
	// must not be closed while its record is being handed over.
	runtime.KeepAlive(s)
}

// errorAttr is the attribute of Logger.Error's error.
func (c *config) errorAttr(err error) slog.Attr {
	switch {
	case c.keepErrors:
		return slog.Any(c.errorKey, err)
	case c.zapr:
		return zapTextAttr(c.errorKey, err)
	}
	return slog.String(c.errorKey, safeError(err))
}

// WithValues implements logr.LogSink. The values are converted and handed to
// the handler's WithAttrs once; the parent is not changed.
// In Zapr mode, misuse writes zapr's DPanic line through the parent's
// handler, and the pairs from the bad argument on are dropped, as zapr does.
func (s *sink) WithValues(keysAndValues ...any) logr.LogSink {
	if s.cfg.zapr {
		var misuse zaprMisuse
		keysAndValues, misuse = s.cfg.zaprArgs(keysAndValues)
		if misuse.msg != "" {
			// One frame fewer than log's: WithValues calls callSite itself.
			pc, stack := s.callSite(max(callerSkip-1+s.infoDepth+s.depth, 0), s.stackAt(zapDPanicLevel))
			s.writeMisuse(s.h, misuse, pc, stack)
			runtime.KeepAlive(s) // as in log
		}
	}
	if len(keysAndValues) == 0 {
		return s
	}
	return s.withAttrs(s.cfg.kvToAttrs(keysAndValues))
}

func (s *sink) withAttrs(attrs []slog.Attr) *sink {
	c := *s
	c.ops = append(s.ops[:len(s.ops):len(s.ops)], op{attrs: attrs}) // full slice expression: never writes into the parent's array
	c.h = s.h.WithAttrs(attrs)
	return &c
}

// WithName implements logr.LogSink: names join with the separator. In
// Zapr mode an empty name changes nothing, as with zap's Named.
func (s *sink) WithName(name string) logr.LogSink {
	if name == "" && s.cfg.zapr {
		return s
	}
	c := *s
	if s.name == "" {
		c.name = name
	} else {
		c.name = s.name + s.cfg.nameSep + name
	}
	c.h = c.rebuild()
	return &c
}

// rebuild derives the handler from root: name first, then every op in order.
func (s *sink) rebuild() slog.Handler {
	h := s.root
	if s.name != "" {
		if s.cfg.namer != nil {
			h = s.cfg.namer(h, s.name)
		} else {
			h = h.WithAttrs([]slog.Attr{slog.String(s.cfg.nameKey, s.name)})
		}
	}
	for _, o := range s.ops {
		if o.attrs != nil {
			h = h.WithAttrs(o.attrs)
		} else {
			h = h.WithGroup(o.group)
		}
	}
	return h
}

// WithCallDepth implements logr.CallDepthLogSink; depths add up and may be
// negative (controller-runtime's delegating sink passes -1).
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	c.depth += depth
	return &c
}

// Handle implements logr.SlogSink. Records keep their level (Warn stays Warn)
// and their PC; the handler's Enabled is consulted because logr's slog adapter
// reports every Error-or-above record as enabled.
func (s *sink) Handle(ctx context.Context, r slog.Record) error {
	if s.cfg.zapr {
		r.Level = zaprLevel(r.Level)
	}
	if !s.h.Enabled(ctx, r.Level) {
		return nil
	}
	if s.stackAt(r.Level) {
		r = r.Clone() // we add an attribute; the caller's record may share its backing array
		r.AddAttrs(slog.String(s.cfg.stackKey, stackFrom(r.PC)))
	}
	err := s.h.Handle(ctx, r)
	runtime.KeepAlive(s) // as in log
	return err
}

// WithAttrs implements logr.SlogSink.
func (s *sink) WithAttrs(attrs []slog.Attr) logr.SlogSink {
	if len(attrs) == 0 {
		return s
	}
	return s.withAttrs(attrs)
}

// WithGroup implements logr.SlogSink.
func (s *sink) WithGroup(name string) logr.SlogSink {
	c := *s
	c.ops = append(s.ops[:len(s.ops):len(s.ops)], op{group: name}) // full slice expression: parent untouched
	c.h = s.h.WithGroup(name)
	return &c
}

// Handler returns the slog.Handler that l's records go to (with l's name and
// values applied), or false if l was not made by this package. The handler
// does not keep l's loggers alive: with CloseWhenUnreachable (zap.New uses
// it) it is closed once they are all gone, even while it is still in use.
func Handler(l logr.Logger) (slog.Handler, bool) {
	s, ok := l.GetSink().(*sink)
	if !ok {
		return nil, false
	}
	return s.h, true
}

// Flush flushes the handler behind l when it has a Flush() error method
// (asyncbus handlers do): every record logged before the call is then in the
// writer, or, on an output that hangs, an asyncbus handler's Flush returns
// an error after 5 s. It returns nil for other handlers and loggers.
//
// l may be a logger whose sink wraps one of this package's, such as
// controller-runtime's ctrl.Log (log.Log) after ctrl.SetLogger: Flush
// asks l.WithValues() for its sink, which such delegating sinks answer
// with the sink they forward to. (Before SetLogger, that call adds one
// pending child to the delegating logger, as any WithValues does.)
func Flush(l logr.Logger) error {
	s := sinkOf(l)
	if s == nil {
		return nil
	}
	if f, ok := s.root.(interface{ Flush() error }); ok {
		err := f.Flush()
		runtime.KeepAlive(s) // a CloseWhenUnreachable logger stays open until Flush returns
		return err
	}
	return nil
}

// Close closes the handler behind l when it has a Close() error method
// (asyncbus handlers do: flush and stop). It returns nil otherwise. Like
// [Flush], it reaches the handler through controller-runtime's delegating
// logger.
func Close(l logr.Logger) error {
	s := sinkOf(l)
	if s == nil {
		return nil
	}
	if s.life != nil {
		s.life.cleanup.Stop() // closed here: not again once the loggers are gone
	}
	if c, ok := s.root.(closer); ok {
		return c.Close()
	}
	return nil
}

// sinkOf returns l's sink if this package made it, or else the sink that
// l's WithValues() returns if this package made that one (a delegating
// sink forwards WithValues to the sink it wraps), or nil.
func sinkOf(l logr.Logger) *sink {
	if s, ok := l.GetSink().(*sink); ok {
		return s
	}
	if l.GetSink() == nil {
		return nil
	}
	if s, ok := l.WithValues().GetSink().(*sink); ok {
		return s
	}
	return nil
}
