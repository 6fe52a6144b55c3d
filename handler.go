// Package asyncbus is a fast, asynchronous log/slog handler.
//
// Each record is encoded on the caller's goroutine into a pooled buffer (JSON,
// text, logfmt or console), then copied into a lock-free multi-producer ring
// (package async). One drainer goroutine writes the ring to the output in
// large batches, adapting batch size and sleep to the backlog and parking
// when idle. A log call therefore never waits for a lock, a syscall or the
// disk, unless the ring is full and Options.Overflow is Block.
//
//	h := asyncbus.NewHandler(os.Stdout, nil)
//	defer h.Close()
//	slog.SetDefault(slog.New(h))
//
// Nothing accepted is lost silently: records refused because the ring was
// full (Drop mode) or because the handler was closed are counted in Stats,
// and the drainer writes an in-band marker line at the gap saying how many
// records were lost there.
package asyncbus

import (
	"context"
	"expvar"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/asyncbus/asyncbus/async"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/plug"
)

// Format selects how records are encoded.
type Format = encode.Format

// The output formats.
const (
	// JSON is byte-for-byte what slog.NewJSONHandler writes (the zero value).
	JSON = encode.JSON
	// Text is byte-for-byte what slog.NewTextHandler writes.
	Text = encode.Text
	// Logfmt is strict logfmt with ts, level and msg keys and dotted group keys.
	Logfmt = encode.Logfmt
	// Console is a human format for development: time, aligned level,
	// message, then key=value attributes, coloured on terminals.
	Console = encode.Console
)

// Overflow says what Handle does when the ring is full.
type Overflow = async.Overflow

// The overflow policies.
const (
	// Block waits for space (the zero value). With Options.BlockTimeout it
	// waits at most that long, then drops the record and counts it.
	Block = async.Block
	// Drop returns ErrDropped at once and counts the record as dropped.
	Drop = async.Drop
)

// Stats is a snapshot of a handler's counters; derived handlers share them.
// After Flush or Close, Enqueued == Written + Dropped + Failed.
type Stats = async.Stats

var (
	// ErrClosed is returned by Handle after Close. The record is counted in
	// Stats.Dropped and Stats.DroppedClosed.
	ErrClosed = async.ErrClosed
	// ErrDropped is returned by Handle when the ring was full and the
	// record was dropped (Drop mode, or Block with a BlockTimeout).
	ErrDropped = async.ErrDropped
)

// ColorMode says when the Console format uses ANSI colours.
type ColorMode int

const (
	// ColorAuto colours when the output is a terminal and NO_COLOR is unset.
	ColorAuto ColorMode = iota
	// ColorAlways always colours.
	ColorAlways
	// ColorNever never colours.
	ColorNever
)

// Options configures a Handler. The zero value (or nil) means: JSON, Info,
// Block, an 8 MiB ring, 20 ms maximum latency, FATAL records synced.
type Options struct {
	// Level is the minimum level written; nil means Info. A *slog.LevelVar
	// may be used to change it at run time. Ignored when Rules is set.
	Level slog.Leveler
	// AddSource adds the caller's file and line, as slog.HandlerOptions does.
	AddSource bool
	// ReplaceAttr rewrites or drops attributes, as slog.HandlerOptions does.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr
	// SlogLevelNames prints LevelTrace and LevelFatal as slog does
	// (DEBUG-4, ERROR+4) instead of TRACE and FATAL.
	SlogLevelNames bool

	// Format is the output format; the zero value is JSON.
	Format Format
	// Color controls ANSI colour in the Console format.
	Color ColorMode

	// Overflow is the policy when the ring is full; the zero value is Block.
	Overflow Overflow
	// BlockTimeout bounds the wait in Block mode; after it the record is
	// dropped and counted. Zero waits until space frees.
	BlockTimeout time.Duration
	// Capacity is the ring size in bytes; zero means 8 MiB.
	Capacity int
	// MaxLatency bounds how long a committed record waits before its write
	// starts, even under light load; zero means 20 ms.
	MaxLatency time.Duration
	// HighWatermark is the ring fill fraction (0..1) at which the drainer is
	// woken at once and switches to its largest batches; zero means 0.75.
	HighWatermark float64

	// SyncLevel: records at or above it are written, and synced where the
	// output can sync, before Handle returns, so they survive a following
	// os.Exit. Nil means LevelFatal.
	SyncLevel slog.Leveler
	// OnError receives write errors from the drainer, rate-limited. Nil
	// prints them to standard error.
	OnError func(error)
	// RingFile, if set, keeps the ring in this memory-mapped file, so that
	// records accepted before a kill -9, panic or OOM kill are written by the
	// next start (see Open, which reports its errors; NewHandler falls back
	// to an in-memory ring and reports them to OnError).
	RingFile string

	// Rules, when set, gives per-logger levels (see Handler.Named) and
	// replaces Level.
	Rules *LevelRules
	// LoggerKey is the key of the logger name written by Named handlers;
	// empty means "logger".
	LoggerKey string
	// Context, when set, is called for every record written with the
	// context passed to Handle, to add top-level fields such as trace IDs
	// (otelbridge.TraceContext supplies one). FieldWriter's AddBytes and
	// AddUint64 allocate nothing.
	Context func(ctx context.Context, w *FieldWriter)
}

// Handler is an asynchronous slog.Handler. Handlers derived with WithAttrs,
// WithGroup and Named share one ring and one drainer; Close any one of them
// (typically the root) to flush and stop all.
type Handler struct {
	core     *core
	enc      *encode.Encoder
	name     string
	slot     *levelSlot   // the level to compare against: one atomic load
	leveler  slog.Leveler // non-nil only for a caller's dynamic Leveler (e.g. *slog.LevelVar)
	stateful bool         // WithAttrs or WithGroup was applied (see HandleAttrs)
	rec      plug.Encoder // a sink package's record encoder (recordencoder.go); nil: enc
}

// core is what all handlers derived from one NewHandler share.
type core struct {
	bus       *async.Bus
	syncLevel slog.Leveler
	context   func(context.Context, *FieldWriter)
	rules     *LevelRules
	copyCtx   bool // ReplaceAttr is set: context field values are copied, not aliased
	closeOnce sync.Once
	closeErr  error
	closing   func(context.Context) // recordencoder.go: tells a plugged sink that Close began
}

// NewHandler returns a handler writing to w. If w implements
// async.BatchWriter (filesink.File does), it receives whole batches;
// *os.File is written with writev. If w has a Sync method, Flush and
// synchronous levels call it.
//
// Invalid numeric options (negative sizes or durations, a watermark outside
// 0..1) fall back to their defaults.
func NewHandler(w io.Writer, opts *Options) *Handler {
	h, _ := newHandler(w, opts, false)
	return h
}

// newHandler is NewHandler; with strict, a ring file that cannot be opened
// or recovered is returned as an error instead of falling back.
func newHandler(w io.Writer, opts *Options, strict bool) (*Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if w == nil {
		w = io.Discard
	}
	if o.OnError == nil {
		o.OnError = func(err error) { fmt.Fprintf(os.Stderr, "asyncbus: %v\n", err) }
	}
	color := false
	switch o.Color {
	case ColorAlways:
		color = true
	case ColorAuto:
		_, noColor := os.LookupEnv("NO_COLOR")
		color = !noColor && isTerminal(w)
	}
	enc := encode.New(encode.Options{
		Format:         o.Format,
		AddSource:      o.AddSource,
		ReplaceAttr:    o.ReplaceAttr,
		SlogLevelNames: o.SlogLevelNames,
		Color:          color,
		LoggerKey:      o.LoggerKey,
	})
	cfg := async.Config{
		Capacity:      max(o.Capacity, 0),
		Overflow:      o.Overflow,
		BlockTimeout:  max(o.BlockTimeout, 0),
		MaxLatency:    max(o.MaxLatency, 0),
		HighWatermark: o.HighWatermark,
		OnError:       o.OnError,
		RingFile:      o.RingFile,
		DropMarker: func(dst []byte, n uint64) []byte {
			return enc.AppendDropMarker(dst, time.Now(), n)
		},
	}
	if cfg.HighWatermark < 0 || cfg.HighWatermark > 1 {
		cfg.HighWatermark = 0
	}
	bus, err := async.New(w, cfg)
	if err != nil && cfg.RingFile != "" {
		if strict {
			return nil, err
		}
		o.OnError(fmt.Errorf("ring file unusable, logging to an in-memory ring: %w", err))
		cfg.RingFile = ""
		bus, err = async.New(w, cfg)
	}
	if err != nil {
		// Only reachable through an option the checks above missed: report
		// it and run with the defaults rather than lose the logs.
		o.OnError(fmt.Errorf("invalid options, using defaults: %w", err))
		bus, err = async.New(w, async.Config{OnError: o.OnError, DropMarker: cfg.DropMarker})
		if err != nil {
			panic("asyncbus: cannot start the bus: " + err.Error())
		}
	}
	c := &core{
		bus:       bus,
		syncLevel: o.SyncLevel,
		context:   o.Context,
		rules:     o.Rules,
		copyCtx:   o.ReplaceAttr != nil,
	}
	if c.syncLevel == nil {
		c.syncLevel = LevelFatal
	}
	h := &Handler{core: c, enc: enc}
	switch {
	case o.Rules != nil:
		h.slot = o.Rules.slot("")
	default:
		h.slot = &levelSlot{}
		switch l := o.Level.(type) {
		case nil:
			h.slot.level.Store(int64(slog.LevelInfo)) // set before h is shared
		case slog.Level:
			h.slot.level.Store(int64(l)) // set before h is shared
		default:
			h.leveler = l
		}
	}
	return h, nil
}

// Enabled reports whether records at level l are written. It is one atomic
// load (or one call of a dynamic Options.Level) and allocates nothing.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool {
	if h.leveler != nil {
		return l >= h.leveler.Level()
	}
	return l >= h.slot.Level()
}

// Handle encodes r on the caller's goroutine and enqueues it. It returns
// ErrClosed after Close, ErrDropped when the ring was full under the Drop
// policy (or the BlockTimeout expired), and otherwise nil without waiting
// for the write, except for records at or above Options.SyncLevel, which
// are written and synced before Handle returns.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if h.rec != nil {
		return h.handleRecord(ctx, r)
	}
	b := bufPool.Get().(*buffer)
	b.data = h.enc.Append(b.data[:0], r, h.contextFields(ctx, b))
	return h.enqueue(b, r.Level)
}

// HandleAttrs is Handle for a record made of t, level, msg and attrs,
// without building a slog.Record: a Record keeps five attributes inline
// and allocates for more, while this path writes attrs straight from the
// slice. The output is the same as Handle's for such a record (PC 0: no
// source). attrs are not retained. Bridges that convert records from
// other APIs (otelbridge) use it.
func (h *Handler) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if h.stateful || h.rec != nil {
		// WithAttrs/WithGroup state sits between top-level fields and the
		// record's attributes: only a Record puts attrs after it.
		r := slog.NewRecord(t, level, msg, 0)
		r.AddAttrs(attrs...)
		return h.Handle(ctx, r)
	}
	b := bufPool.Get().(*buffer)
	extra := attrs
	if fields := h.contextFields(ctx, b); len(fields) > 0 {
		b.extra = append(append(b.extra[:0], fields...), attrs...)
		extra = b.extra
	}
	// Without WithAttrs/WithGroup state, top-level extra attributes land
	// exactly where a record's attributes would (after the built-ins and
	// the logger name), with the same ReplaceAttr groups (none).
	b.data = h.enc.Append(b.data[:0], slog.NewRecord(t, level, msg, 0), extra)
	return h.enqueue(b, level)
}

// contextFields runs the Options.Context hook into b's FieldWriter.
func (h *Handler) contextFields(ctx context.Context, b *buffer) []slog.Attr {
	hook := h.core.context
	if hook == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.fields.reset(h.core.copyCtx)
	hook(ctx, &b.fields)
	return b.fields.attrs
}

// enqueue puts the encoded line in b on the bus, releases b, and syncs for
// levels at or above SyncLevel.
func (h *Handler) enqueue(b *buffer, level slog.Level) error {
	err := h.core.bus.Enqueue(b.data)
	b.release()
	if err != nil {
		return err
	}
	if level >= h.core.syncLevel.Level() {
		// The caller may be about to exit: sync regardless of ctx.
		return h.core.bus.Flush(context.Background())
	}
	return nil
}

// WithAttrs returns a handler whose records carry attrs. They are encoded
// once, here, not per record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	if h.rec != nil {
		h2.rec = h.rec.WithAttrs(attrs)
		return &h2
	}
	h2.enc = h.enc.WithAttrs(attrs)
	h2.stateful = true
	return &h2
}

// WithGroup returns a handler that qualifies later attributes with name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	if h.rec != nil {
		h2.rec = h.rec.WithGroup(name)
		return &h2
	}
	h2.enc = h.enc.WithGroup(name)
	h2.stateful = true
	return &h2
}

// Named returns a handler for the logger called name below h's own name
// (joined with "."), which writes the name under Options.LoggerKey and, when
// Options.Rules is set, takes its level from the rule for that name.
func (h *Handler) Named(name string) *Handler {
	if name == "" {
		return h
	}
	full := name
	if h.name != "" {
		full = h.name + "." + name
	}
	h2 := *h
	h2.name = full
	h2.enc = h.enc.Named(full)
	if h.core.rules != nil {
		h2.slot = h.core.rules.slot(full)
	}
	return &h2
}

// Name reports the logger name given by Named, or "".
func (h *Handler) Name() string { return h.name }

// Flush returns once every record handled before the call has been written
// to the output, and synced where the output has a Sync method.
func (h *Handler) Flush() error {
	return h.core.bus.Flush(context.Background())
}

// FlushContext is Flush bounded by ctx.
func (h *Handler) FlushContext(ctx context.Context) error {
	return h.core.bus.Flush(ctx)
}

// Close flushes and stops the drainer. It is idempotent and safe to call
// from several goroutines; Handle afterwards returns ErrClosed. It does not
// close the output writer.
func (h *Handler) Close() error {
	return h.CloseContext(context.Background())
}

// CloseContext is Close bounded by ctx: if ctx ends first, records still
// queued are counted as failed and ctx's error is returned.
func (h *Handler) CloseContext(ctx context.Context) error {
	h.core.closeOnce.Do(func() {
		h.core.notifyClosing(ctx) // recordencoder.go
		h.core.closeErr = h.core.bus.Close(ctx)
	})
	return h.core.closeErr
}

// Stats returns the counters of the ring that h and every handler derived
// from the same NewHandler share. It is cheap and safe at any time.
func (h *Handler) Stats() Stats {
	return h.core.bus.Stats()
}

// PublishExpvar publishes Stats under name in the expvar registry (served at
// /debug/vars by net/http/pprof-style muxes). Publishing a name twice is an
// error, not a panic.
func (h *Handler) PublishExpvar(name string) error {
	// expvar.Publish panics on a duplicate name: check and publish under
	// one lock so that two concurrent calls cannot both pass the check.
	expvarMu.Lock()
	defer expvarMu.Unlock()
	if expvar.Get(name) != nil {
		return fmt.Errorf("asyncbus: expvar %q is already published", name)
	}
	expvar.Publish(name, expvar.Func(func() any { return h.Stats() }))
	return nil
}

var expvarMu sync.Mutex // serialises PublishExpvar's check-then-publish

// FieldWriter collects the top-level fields that Options.Context adds to one
// record. Its memory belongs to the handler and is reused for the next
// record: hooks must not keep it. AddBytes and AddUint64 allocate nothing.
type FieldWriter struct {
	attrs   []slog.Attr
	arr     [8]slog.Attr
	scratch [256]byte
	used    int
	copy    bool
}

func (w *FieldWriter) reset(copyValues bool) {
	w.attrs = w.arr[:0]
	w.used = 0
	w.copy = copyValues
}

// AddBytes adds a string field whose value is copied from value.
func (w *FieldWriter) AddBytes(key string, value []byte) {
	if w.copy || len(value) == 0 || w.used+len(value) > len(w.scratch) {
		w.attrs = append(w.attrs, slog.String(key, string(value)))
		return
	}
	n := copy(w.scratch[w.used:], value)
	// The string aliases scratch, which stays unchanged until this buffer
	// is reused by a later Handle, after the encoder has copied the bytes
	// out. When a user ReplaceAttr could keep the value, w.copy is set and
	// the branch above copies instead.
	s := unsafe.String(&w.scratch[w.used], n)
	w.used += n
	w.attrs = append(w.attrs, slog.String(key, s))
}

// AddString adds a string field.
func (w *FieldWriter) AddString(key, value string) {
	w.attrs = append(w.attrs, slog.String(key, value))
}

// AddUint64 adds an unsigned integer field.
func (w *FieldWriter) AddUint64(key string, v uint64) {
	w.attrs = append(w.attrs, slog.Uint64(key, v))
}

// AddAttr adds any attribute. It may allocate, as building the Attr may.
func (w *FieldWriter) AddAttr(a slog.Attr) {
	w.attrs = append(w.attrs, a)
}

// buffer is the per-call scratch space, pooled so that steady-state
// logging allocates nothing.
type buffer struct {
	data   []byte
	fields FieldWriter
	extra  []slog.Attr // HandleAttrs: context fields followed by the caller's attrs
}

// maxPooledBuffer keeps one huge record from pinning its buffer forever.
const maxPooledBuffer = 64 << 10

var bufPool = sync.Pool{New: func() any { return &buffer{data: make([]byte, 0, 1024)} }}

func (b *buffer) release() {
	if cap(b.data) > maxPooledBuffer {
		return
	}
	clear(b.fields.arr[:]) // drop references to caller values before pooling
	b.fields.attrs = nil
	clear(b.extra)
	b.extra = b.extra[:0]
	bufPool.Put(b)
}

var _ slog.Handler = (*Handler)(nil)
