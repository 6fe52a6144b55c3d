package asyncbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/asyncbus/asyncbus/internal/bus"
)

// Overflow says what Handle does when the ring is full.
type Overflow int

// The overflow policies.
const (
	// Block waits for space (the zero value). With Options.Ring.BlockTimeout it
	// waits at most that long, then drops the record and counts it.
	Block Overflow = iota
	// Drop returns ErrDropped at once and counts the record as dropped.
	Drop
)

// String returns o's name as it is written in Go ("Block", "Drop"), or
// "Overflow(N)" for a value that is not a policy.
func (o Overflow) String() string {
	switch o {
	case Block:
		return "Block"
	case Drop:
		return "Drop"
	}
	return "Overflow(" + strconv.Itoa(int(o)) + ")"
}

// ColorMode says when the Console format uses ANSI colours.
type ColorMode int

const (
	// ColorAuto follows the usual terminal rules, in this order: NO_COLOR
	// set and not empty, CLICOLOR=0 or TERM=dumb turn colour off;
	// FORCE_COLOR or CLICOLOR_FORCE set to anything but "" or "0" turn it
	// on; otherwise the output is coloured when it is a terminal (on
	// Windows a console, switched to ANSI processing).
	ColorAuto ColorMode = iota
	// ColorAlways always colours.
	ColorAlways
	// ColorNever never colours.
	ColorNever
)

// String returns m's name as it is written in Go ("ColorAuto"), or
// "ColorMode(N)" for a value that is not a mode.
func (m ColorMode) String() string {
	switch m {
	case ColorAuto:
		return "ColorAuto"
	case ColorAlways:
		return "ColorAlways"
	case ColorNever:
		return "ColorNever"
	}
	return "ColorMode(" + strconv.Itoa(int(m)) + ")"
}

// Options configures a Handler. The zero value (or nil) means: JSON, Info,
// Block, an 8 MiB ring, 20 ms maximum latency, FATAL records synced. The
// top-level fields are those most programs set; the rest are grouped by
// concern, each group's zero value meaning its defaults.
type Options struct {
	// Level is the minimum level written; nil means Info. A *slog.LevelVar
	// may be used to change it at run time. With Rules set, the rules give
	// every level, so setting Level too is an invalid option (Open refuses
	// it; NewHandler reports it and ignores Level).
	//
	// In Level, SyncLevel and Features.StackTraceLevel, a Leveler that is a
	// nil pointer (an unset *slog.LevelVar field) is an invalid option: it
	// is replaced by the default, as nil is (see NewHandler).
	Level slog.Leveler
	// Rules, when set, gives per-logger levels (see Handler.Named) and
	// replaces Level, which must then be nil.
	Rules *LevelRules
	// SyncLevel: records at or above it are written, and synced where the
	// output can sync, before Handle returns, so they survive a following
	// os.Exit. Nil means LevelFatal.
	SyncLevel slog.Leveler

	// Format is the output format: JSON (the zero value), Text, Logfmt,
	// Console, ZapJSON or ZapConsole (either with a WithZapTime encoding),
	// or a cloud preset: GCPJSON, ECSJSON or DatadogJSON.
	Format Format
	// AddSource adds the caller's file and line, as slog.HandlerOptions does.
	AddSource bool
	// ReplaceAttr rewrites or drops attributes, as slog.HandlerOptions does.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr

	// OnError receives each failure once, never on the goroutine that
	// writes the output or logs, so it may log through this handler, Flush
	// or Close: a failed write or sync of the output as "asyncbus: write
	// <output>: <error>" (repeats within a second are counted in the next
	// report), a ring file that had to be set aside, an option NewHandler
	// corrected (reported on the caller's goroutine, before NewHandler
	// returns), and the first record logged after Close (an error wrapping
	// ErrClosed; its Handle returns once OnError has, at most 1 s later).
	// Close returns after every report has been delivered (unless called
	// from OnError), a panic in OnError is recovered, and reports beyond a
	// queue of 64 are counted into one. Nil prints to standard error.
	OnError func(error)

	// Encoding holds the format's finer settings: level names, colour, the
	// logger key and unique keys.
	Encoding EncodingOptions
	// Ring holds the ring's size, its overflow policy, the drainer's
	// latency and the durable ring file.
	Ring RingOptions
	// Retry says how a failing output is retried.
	Retry RetryOptions
	// Features holds what plugs into the pipeline: the Context hook, stack
	// traces, the Sampler and the flight recorder. Each is off when unset
	// and then costs nothing.
	Features FeatureOptions
}

// EncodingOptions are the format's finer settings (Options.Encoding).
type EncodingOptions struct {
	// TraceFatalNames prints LevelTrace and LevelFatal as TRACE and FATAL
	// in the JSON, Text, Logfmt and Console formats, which by default
	// print them as slog does (DEBUG-4, ERROR+4). The other formats
	// always use their backends' names.
	TraceFatalNames bool
	// Color controls ANSI colour in the Console format.
	Color ColorMode
	// LoggerKey is the key of the logger name written by Named handlers;
	// empty means "logger" (a cloud preset's logger key for the presets).
	LoggerKey string
	// UniqueKeys writes each key once per object, in every format: a
	// repeated key keeps its first position and takes its last value, as
	// the OpenTelemetry SDK keeps a repeated attribute, across the built-in
	// fields, the logger name, the Context fields, WithAttrs and the record;
	// in JSON, object values (groups) of one key are merged. With
	// Features.Sequence the numbers' keys win: a top-level attribute seq
	// or run is written as seq_ or run_. Off (the default), JSON and Text
	// stay byte-identical to slog's handlers, which write every repeat
	// (see package encode), the numbers' keys included.
	UniqueKeys bool
}

// RingOptions configure the ring records wait in and the drainer that
// writes them (Options.Ring).
type RingOptions struct {
	// Capacity is the ring size in bytes, rounded up to a power of two;
	// zero means 8 MiB. It must be at least 4 KiB (records longer than an
	// eighth of the ring take a slower path, so a smaller ring would send
	// every ordinary record there) and at most 1 GiB (the ring is
	// allocated, or mapped, whole when the handler is made): a value
	// outside is refused by Open and replaced by the default (and
	// reported) by NewHandler.
	Capacity int
	// Overflow is the policy when the ring is full; the zero value is Block.
	Overflow Overflow
	// BlockTimeout bounds the wait in Block mode; after it the record is
	// dropped and counted. Zero waits until space frees. Drop mode never
	// waits, so a BlockTimeout with Drop is an invalid option (Open refuses
	// it; NewHandler reports it and ignores it).
	BlockTimeout time.Duration
	// MaxLatency bounds how long a committed record waits before its write
	// starts, even under light load, unless the write in progress when it
	// was committed takes longer by itself (a slow or stuck output); zero
	// means 20 ms. The drainer spends what is left of it gathering larger
	// batches (at most MaxLatency/2 at a time).
	MaxLatency time.Duration
	// HighWatermark is the ring fill fraction (0..1) at which the drainer is
	// woken at once, without gathering first; zero means a
	// fixed backlog of 256 KiB (three quarters of a smaller ring), so that
	// the records the writer reads are still in the processor's cache.
	HighWatermark float64
	// File, if set, keeps the ring in this memory-mapped file, so that
	// records accepted before a kill -9, panic or OOM kill are written by the
	// next start (see Open, which reports its errors; NewHandler falls back
	// to an in-memory ring and reports them to OnError).
	File string
}

// RetryOptions say how a failing output is retried (Options.Retry).
type RetryOptions struct {
	// Attempts is how many times a batch is written to a failing output,
	// backing off between attempts (doubling from 1 ms up to MaxBackoff),
	// before its remaining records are counted as failed (Stats.Failed)
	// and reported to OnError; zero means 4. While the output keeps
	// failing, each later batch gets one attempt at the back-off interval
	// until a write succeeds.
	//
	// Raise it, with MaxBackoff, to ride out longer outages of the output
	// without losing records: meanwhile the ring fills and Ring.Overflow
	// decides what callers see. Callers that wait for the output (Flush, an
	// Error or SyncLevel record) still wait only for the first 4 attempts
	// (one that starts waiting later, for at most one more back-off): then
	// they get the output's error, matching ErrRetrying, and the records
	// stay in the ring. Close waits for the whole budget of the batch being
	// retried; CloseContext bounds it.
	Attempts int
	// MaxBackoff caps the back-off between write attempts, and so the
	// interval at which a failing output is probed again (a larger value
	// notices a recovered output later); zero means 1 s. A value below
	// 1 ms is the back-off itself, without doubling.
	MaxBackoff time.Duration
}

// FeatureOptions are what plugs into the handler's pipeline
// (Options.Features); each is off when unset and then costs nothing.
type FeatureOptions struct {
	// Context, when set, is called for every record written with the
	// context passed to Handle, to add top-level fields such as trace IDs
	// (otelbridge.TraceContext supplies one). FieldWriter's AddBytes and
	// AddString allocate nothing.
	Context func(ctx context.Context, w *FieldWriter)
	// StackTraceLevel, when set, adds a stack trace in zap's format to
	// records at or above it, as the top-level attribute "stacktrace"
	// (outside any WithGroup group, like the Context fields): the stack an
	// error attribute carries (pkg/errors, go-errors), else the logging
	// call's, taken on the caller's goroutine.
	StackTraceLevel slog.Leveler
	// Sampler, when set, decides before encoding whether each record is
	// written (see Sampler; *sampling.Sampler implements it). Refused
	// records are counted in Stats.Sampled. When the Sampler is a
	// MarkingSampler (*sampling.Sampler is), its markers ("suppressed N
	// similar records") are written to this output.
	Sampler Sampler
	// FlightRecorder, when set, keeps the records below the handler's level
	// (down to its Level) in memory and writes them before the next record
	// at or above its Trigger level (see FlightRecorder).
	FlightRecorder *FlightRecorder

	// Sequence, when set, gives each record a sequence number (1, 2, ...)
	// in the order the handler writes records, and the handler's run
	// identity (Stats.RunID): the keys "seq" and "run", first in a JSON
	// object, at the start of the line (seq=N run=R) in the other formats.
	// The numbers have no gaps except where records were lost: a drop
	// marker carries the number of the first record lost at its gap and
	// the next record continues after the lost ones; sampled records take
	// no number. asyncbus-pretty -check verifies them. With Ring.File,
	// records replayed after a crash keep the numbers and run identity of
	// the process that accepted them. An output with its own Encoder
	// writes them in its encoding when the Encoder has the sequence
	// methods (journald: the fields ASYNCBUS_SEQ and ASYNCBUS_RUN;
	// otlpsink: the attributes asyncbus.seq and asyncbus.run), and
	// OpenWithEncoder refuses the option otherwise, and with Ring.File.
	// In the JSON and key=value forms, Close writes after the last record
	// the run-end line, {"run_end":"R","count":C,"msg":"asyncbus: run
	// ended"} (run_end=R count=C ... in the other formats): no record
	// starts with it, it takes no number, C is the count of numbers the
	// run gave out, and Stats count it as a record. -check reports a run
	// without it as ended without Close, and fails one it disagrees with.
	Sequence bool
}

// Limits of Options.Ring.Capacity; values in between are rounded up to a power
// of two. The minimum keeps an ordinary record inline: below it, records
// over an eighth of the ring (512 bytes) take the slower oversize path.
const (
	defaultCapacity = bus.DefaultCapacity
	minCapacity     = 4 << 10
	maxCapacity     = bus.MaxCapacity
)

// validate checks o, the one place options are checked, group by group.
// Each invalid setting is replaced by its default in o and described in
// the returned error: for NewHandler (strict false), which reports it and
// runs, the message says what is used instead; for Open (strict true),
// which refuses, it says so.
func (o *Options) validate(w io.Writer, strict bool) error {
	p := &problems{strict: strict}
	if w == nil {
		p.bad("the output is nil", "every record fails (counted in Stats.Failed)")
	} else if isNilWriter(w) {
		p.bad(fmt.Sprintf("the output is a nil %T", w), "every record fails (counted in Stats.Failed)")
	}
	if !o.Format.Valid() {
		p.bad(fmt.Sprintf("Options.Format %d is not JSON, Text, Logfmt, Console, a zap format or a cloud preset", int(o.Format)), "using JSON")
		o.Format = JSON
	}
	o.Encoding.validate(p)
	o.Ring.validate(p)
	o.Retry.validate(p)
	o.Features.validate(p)
	o.validateLevels(p)
	return errors.Join(p.errs...)
}

// problems collects the invalid settings validate finds.
type problems struct {
	strict bool // Open: the options are refused, not corrected
	errs   []error
}

// bad records one invalid setting: problem says what is wrong, and instead
// what NewHandler does about it.
func (p *problems) bad(problem, instead string) {
	if p.strict {
		instead = "Open refused it"
	}
	p.errs = append(p.errs, errors.New("asyncbus: "+problem+"; "+instead))
}

// validate checks the Encoding group.
func (e *EncodingOptions) validate(p *problems) {
	if e.Color < ColorAuto || e.Color > ColorNever {
		p.bad(fmt.Sprintf("Options.Encoding.Color %d is not ColorAuto, ColorAlways or ColorNever", int(e.Color)), "using ColorAuto")
		e.Color = ColorAuto
	}
}

// validate checks the Ring group.
func (r *RingOptions) validate(p *problems) {
	if r.Overflow != Block && r.Overflow != Drop {
		p.bad(fmt.Sprintf("Options.Ring.Overflow %d is not Block or Drop", int(r.Overflow)), "using Block")
		r.Overflow = Block
	}
	if r.BlockTimeout < 0 {
		p.bad(fmt.Sprintf("Options.Ring.BlockTimeout %v is negative", r.BlockTimeout), "waiting without timeout")
		r.BlockTimeout = 0
	}
	if r.Overflow == Drop && r.BlockTimeout > 0 {
		p.bad(fmt.Sprintf("Options.Ring.BlockTimeout %v has no effect with Overflow Drop, which never waits", r.BlockTimeout), "ignoring it")
		r.BlockTimeout = 0
	}
	if r.Capacity < 0 || r.Capacity > maxCapacity || (r.Capacity > 0 && r.Capacity < minCapacity) {
		p.bad(fmt.Sprintf("Options.Ring.Capacity %d is outside [%d, %d] bytes (0 means the default, %d)", r.Capacity, minCapacity, maxCapacity, defaultCapacity),
			fmt.Sprintf("using %d", defaultCapacity))
		r.Capacity = 0
	}
	if r.MaxLatency < 0 {
		p.bad(fmt.Sprintf("Options.Ring.MaxLatency %v is negative", r.MaxLatency), "using the default")
		r.MaxLatency = 0
	}
	if math.IsNaN(r.HighWatermark) || r.HighWatermark < 0 || r.HighWatermark > 1 {
		p.bad(fmt.Sprintf("Options.Ring.HighWatermark %v is outside [0, 1]", r.HighWatermark), "using the default")
		r.HighWatermark = 0
	}
}

// validate checks the Retry group.
func (r *RetryOptions) validate(p *problems) {
	if r.Attempts < 0 {
		p.bad(fmt.Sprintf("Options.Retry.Attempts %d is negative", r.Attempts), fmt.Sprintf("using %d", bus.DefaultWriteAttempts))
		r.Attempts = 0
	}
	if r.MaxBackoff < 0 {
		p.bad(fmt.Sprintf("Options.Retry.MaxBackoff %v is negative", r.MaxBackoff), fmt.Sprintf("using %v", bus.DefaultRetryMax))
		r.MaxBackoff = 0
	}
}

// validate checks the Features group's sizes and durations; its levels are
// checked with the others (validateLevels). A FlightRecorder is copied, so
// that the caller's struct is not changed.
func (f *FeatureOptions) validate(p *problems) {
	if f.FlightRecorder == nil {
		return
	}
	c := *f.FlightRecorder
	if c.Size < 0 || c.Size > maxRecorderSize {
		p.bad(fmt.Sprintf("Options.Features.FlightRecorder.Size %d is outside [0, %d]", c.Size, maxRecorderSize), fmt.Sprintf("using %d", defaultRecorderSize))
		c.Size = 0
	}
	if c.MaxAge < 0 {
		p.bad(fmt.Sprintf("Options.Features.FlightRecorder.MaxAge %v is negative", c.MaxAge), fmt.Sprintf("using %v", defaultRecorderMaxAge))
		c.MaxAge = 0
	}
	f.FlightRecorder = &c
}

// validateLevels checks every Leveler in o, of every group, and that Level
// and Rules are not both set.
func (o *Options) validateLevels(p *problems) {
	type leveler struct {
		name, def string
		v         *slog.Leveler
	}
	levelers := []leveler{
		{"Level", "INFO", &o.Level},
		{"SyncLevel", "FATAL", &o.SyncLevel},
		{"Features.StackTraceLevel", "off", &o.Features.StackTraceLevel},
	}
	if fr := o.Features.FlightRecorder; fr != nil { // validate's copy
		levelers = append(levelers, leveler{"Features.FlightRecorder.Level", "DEBUG", &fr.Level}, leveler{"Features.FlightRecorder.Trigger", "ERROR", &fr.Trigger})
	}
	// A Leveler holding a nil pointer (an uninitialised *slog.LevelVar
	// field) would panic in every Handle: treat it as unset.
	for _, l := range levelers {
		if isNilLeveler(*l.v) && levelPanics(*l.v) {
			p.bad(fmt.Sprintf("Options.%s is a nil %T whose Level panics", l.name, *l.v), "using the default ("+l.def+")")
			*l.v = nil
		}
	}
	if o.Rules != nil && o.Level != nil {
		p.bad(fmt.Sprintf("Options.Level has no effect when Options.Rules is set: the rules %q give every level", o.Rules.String()), "ignoring Level (set the default level in the rules)")
		o.Level = nil
	}
}

// isNilLeveler reports whether l is a non-nil interface holding a nil
// pointer, map, slice, func, channel or interface. Such a Leveler is kept
// if its Level method works (a pointer-receiver method may handle nil, a
// common Go idiom) and replaced if it panics (a nil *slog.LevelVar), see
// levelPanics.
func isNilLeveler(l slog.Leveler) bool { return l != nil && holdsNil(l) }

// holdsNil reports whether the non-nil interface value x holds a nil
// pointer, map, slice, func, channel or interface.
func holdsNil(x any) bool {
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// isNilWriter reports whether w is nil or a nil pointer, map, slice,
// func or chan in the interface: a typed nil such as the *os.File of an
// ignored os.OpenFile error. Such a writer is treated as the nil writer.
func isNilWriter(w io.Writer) bool { return w == nil || holdsNil(w) }

// levelPanics reports whether l.Level() panics.
func levelPanics(l slog.Leveler) (panics bool) {
	defer func() {
		if recover() != nil {
			panics = true
		}
	}()
	l.Level()
	return false
}

// callersWait reports whether log calls may wait for the output w: the
// quiet wait and the Error wait (each bounded, see the guarantees), in
// every overflow mode. Never for a sink that retries over the network
// (Closer, otlpsink): a log call must not wait for a collector's round
// trips and back-off.
func callersWait(w io.Writer) bool {
	_, remote := w.(Closer)
	return !remote
}

// busConfig is the bus configuration for validated options, output w and
// the handler's hooks (busHooks).
func (o *Options) busConfig(w io.Writer, hooks outputHooks) bus.Config {
	return bus.Config{
		Capacity:      o.Ring.Capacity,
		Overflow:      bus.Overflow(o.Ring.Overflow),
		BlockTimeout:  o.Ring.BlockTimeout,
		MaxLatency:    o.Ring.MaxLatency,
		HighWatermark: o.Ring.HighWatermark,
		OnError:       o.OnError,
		RingFile:      o.Ring.File,
		DropMarker:    hooks.dropMarker,
		QuietWait:     callersWait(w),
		WriteAttempts: o.Retry.Attempts,
		RetryMax:      o.Retry.MaxBackoff,
		Sequence:      seqFormat(o, hooks.seqEncode), // sequence.go
		SeqEncode:     hooks.seqEncode,
	}
}

// errNilWriter is what nilOutput's writes fail with.
var errNilWriter = errors.New("asyncbus: nil writer")

// nilOutput is the output of NewHandler(nil, ...): a mistake that must not
// crash the program and must not pass for success, so every write fails.
// Records are then counted in Stats.Failed (never Written), Flush and Close
// return the error, and OnError is told, as for any failing output; the
// drainer's fail-fast state keeps callers from waiting on it.
type nilOutput struct{}

func (nilOutput) Write([]byte) (int, error) { return 0, errNilWriter }

// Name names the output in error reports.
func (nilOutput) Name() string { return "(nil writer)" }
