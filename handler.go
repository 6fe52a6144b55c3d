package asyncbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/bus"
	"github.com/asyncbus/asyncbus/internal/core"
)

// Format selects how records are encoded.
type Format = encode.Format

// The output formats.
const (
	// JSON is byte-for-byte what slog.NewJSONHandler writes (the zero
	// value), except where slog writes invalid JSON: after a group that
	// turns out empty, and before Go 1.27 for a time outside years
	// [0,9999] (see package encode).
	JSON = encode.JSON
	// Text is byte-for-byte what slog.NewTextHandler writes, except after
	// a group that turns out empty (see package encode).
	Text = encode.Text
	// Logfmt is strict logfmt with ts, level and msg keys and dotted group keys.
	Logfmt = encode.Logfmt
	// Console is a human format for development: time, aligned level,
	// message, then key=value attributes, coloured on terminals.
	Console = encode.Console
	// ZapJSON is what go.uber.org/zap's production JSON encoder writes
	// (keys level, ts, logger, caller, msg, stacktrace), as configured by
	// controller-runtime; levels get zap's names (below Info "debug"; with
	// WithLogrLevels, zapr's names for logr's V levels) and the time
	// encoding is chosen with WithZapTime (see package encode).
	ZapJSON = encode.ZapJSON
	// ZapConsole is what go.uber.org/zap's development console encoder
	// writes (tab-separated time, level, logger, caller and message, then
	// the fields as JSON); its time encoding is chosen with WithZapTime
	// (see package encode).
	ZapConsole = encode.ZapConsole
	// GCPJSON is JSON with Google Cloud Logging's keys and severity names
	// (time, severity, message, logging.googleapis.com/sourceLocation);
	// pair it with otelbridge.TraceContext(otelbridge.StyleGoogleCloud)
	// for trace correlation (see package encode).
	GCPJSON = encode.GCPJSON
	// ECSJSON is JSON in Elastic Common Schema (@timestamp, log.level,
	// message, ecs.version, log.origin.*, log.logger, error values as ECS
	// error objects); pair it with otelbridge.StyleECS (see package encode).
	ECSJSON = encode.ECSJSON
	// DatadogJSON is JSON with Datadog's reserved attributes (timestamp,
	// status, message, logger.name); pair it with otelbridge.StyleDatadog
	// (see package encode).
	DatadogJSON = encode.DatadogJSON
)

// Handler is an asynchronous slog.Handler. Handlers derived with WithAttrs,
// WithGroup and Named share one ring and one drainer; Close any one of them
// (typically the root) to flush and stop all.
type Handler struct {
	core     *shared
	enc      *encode.Encoder
	name     string
	slot     *levelSlot   // the level to compare against: one atomic load
	leveler  slog.Leveler // non-nil only for a caller's dynamic Leveler (e.g. *slog.LevelVar)
	stateful bool         // WithAttrs or WithGroup was applied (see handleAttrs)
	grouped  bool         // WithGroup was applied: attributes land inside a group (core.Grouped)
	// bound, if not nil, ends every wait for the output when it ends (a
	// copy made by core.Bound for otelbridge's Exporter, whose deadline
	// must be honoured; see enqueue).
	bound context.Context
	rec   core.Encoder // a sink package's record encoder (recordencoder.go); nil: enc
}

// shared is what all handlers derived from one NewHandler share.
type shared struct {
	bus       *bus.Bus
	out       io.Writer // the output the bus writes to (core.Install connects its hooks)
	syncLevel slog.Leveler
	context   func(context.Context, *FieldWriter)
	rules     *LevelRules
	copyCtx   bool                            // ReplaceAttr is set: context field values are copied, not aliased
	closing   func(context.Context) time.Time // recordencoder.go: tells a plugged sink that Close began (idempotent); when it gives up
	errsKept  bool                            // Options.errorsWritten: Error records are written before Handle returns
	sample    sampleState                     // sample.go: Options.Sampler
	stack     stackState                      // stack.go: Options.StackTraceLevel
	onError   func(error)                     // Options.OnError, defaulted (closing.go reports a record after Close)
	// closedNoted is set by the first record refused after Close (closing.go).
	closedNoted atomic.Bool
	recorder    *recorder    // recorder.go: Options.FlightRecorder; nil: off
	logged      *levelCounts // levelcounts.go: Stats.LoggedTrace and after
	seq         bool         // sequence.go: Options.Sequence, records carry headroom for the number
	room        int          // sequence.go: the headroom encodeRecord and handleAttrs leave (bus.SeqRoom when seq)
}

// NewHandler returns a handler writing to w. If w has a WriteBatch method
// (filesink.File does), it receives whole batches; *os.File is written
// with writev. If w has a Sync method, Flush and synchronous levels call it.
//
// NewHandler never fails: an invalid option (a size out of its range,
// a negative duration, a watermark outside 0..1, an unknown enum value, a
// Leveler that is a nil pointer, an option that has no effect beside
// another: BlockTimeout with Drop, Level with Rules) is replaced by its
// default and reported once to Options.OnError, and a ring file that cannot be used is reported and
// replaced by an in-memory ring. A nil w is reported too, and then every
// record fails: it is counted in Stats.Failed, never as written, and Flush
// and Close return the error. Open returns those errors instead.
func NewHandler(w io.Writer, opts *Options) *Handler {
	h, _ := newHandler(w, opts, false)
	return h
}

// newHandler is NewHandler; with strict, invalid options and a ring file
// that cannot be opened or recovered are returned as errors instead.
func newHandler(w io.Writer, opts *Options, strict bool) (*Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.OnError == nil {
		o.OnError = func(err error) { fmt.Fprintln(os.Stderr, err) }
	}
	if err := o.validate(w, strict); err != nil {
		if strict {
			return nil, err
		}
		o.OnError(err)
	}
	if isNilWriter(w) {
		w = nilOutput{} // reported above; every record is counted as failed
	}
	encOpts := encode.Options{
		Format:         o.Format,
		AddSource:      o.AddSource,
		ReplaceAttr:    o.ReplaceAttr,
		SlogLevelNames: o.SlogLevelNames,
		Color:          useColor(o.Color, w),
		LoggerKey:      o.LoggerKey,
		UniqueKeys:     o.UniqueKeys,
	}
	enc := encode.New(encOpts)
	b, err := bus.New(w, o.busConfig(w, dropMarker(enc, encOpts)))
	if err != nil {
		// Only a ring file can fail.
		if errors.Is(err, bus.ErrRingLocked) {
			err = fmt.Errorf("%w: %s", ErrRingLocked, o.RingFile)
		}
		if strict {
			return nil, err
		}
		o.OnError(fmt.Errorf("asyncbus: ring file unusable, logging to an in-memory ring: %w", err))
		o.RingFile = ""
		b, err = bus.New(w, o.busConfig(w, dropMarker(enc, encOpts)))
		if err != nil {
			panic("asyncbus: in-memory ring failed: " + err.Error()) // cannot happen: only ring files fail
		}
	}
	c := &shared{
		bus:       b,
		syncLevel: o.SyncLevel,
		context:   o.Context,
		rules:     o.Rules,
		copyCtx:   o.ReplaceAttr != nil,
		errsKept:  o.errorsWritten(w),
		out:       w,
		onError:   o.OnError,
		logged:    newLevelCounts(),
		seq:       o.Sequence,
	}
	if c.seq {
		c.room = bus.SeqRoom
	}
	if c.syncLevel == nil {
		c.syncLevel = LevelFatal
	}
	h := &Handler{core: c, enc: enc}
	c.recorder = newRecorder(o.FlightRecorder, enc)      // recorder.go
	c.stack = newStackState(o.StackTraceLevel, o.Format) // stack.go
	c.initSampling(o.Sampler, h)                         // sample.go; markers go through h
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

// Enabled reports whether records at level l are written (or kept by the
// flight recorder): l is at or above the handler's level, or at or above
// the level ctx carries for its request (ctxattrs.WithLevel), which lowers
// the threshold and never raises it. It is one atomic load (or one call of
// a dynamic Options.Level) and allocates nothing; a record below the level
// reads ctx only once some request level was set in the process.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.writes(l) || (h.core.recorder != nil && h.core.recorder.keeps(l)) || requested(ctx, l)
}

// writes reports whether records at level l are written: l is at or above
// the handler's level.
func (h *Handler) writes(l slog.Level) bool {
	if h.leveler != nil {
		return l >= h.leveler.Level()
	}
	return l >= h.slot.Level()
}

// Handle encodes r on the caller's goroutine and enqueues it. It returns
// ErrClosed after Close (the first such record is also reported to
// Options.OnError), ErrDropped when the ring was full under the Drop
// policy (or the BlockTimeout expired), and otherwise nil without waiting
// for the write, except for records at or above slog.LevelError, which are
// written to the output (not synced) before Handle returns, and records at
// or above Options.SyncLevel, which are written and synced (an error matching
// context.DeadlineExceeded if that takes longer than its bound). Every such wait is bounded (see
// the README's guarantees): a slow or hung output never holds a caller
// for long. A record that finds the ring empty while the handler is quiet
// is written on the caller's goroutine (write-through) where that write
// cannot block (a regular file, a pipe with room, a healthy output), and
// one that finds only a short queue ahead of it (other goroutines'
// records of the same moment) waits until the drainer has written it (the
// quiet wait, at most 20 ms, skipped while the output is slow), so a
// quiet logger loses nothing when the program returns from main without
// Close. Both are rate-limited; neither changes what Handle returns.
// Write-through, the quiet wait and the Error wait apply in Block mode
// without BlockTimeout (the default) only.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if h.core.sample.refuse(r.Time, r.Level, r.Message, h.name) {
		return nil // sample.go: counted in Stats.Sampled
	}
	rc := h.core.recorder
	if rc != nil && !h.writes(r.Level) && rc.keeps(r.Level) && !requested(ctx, r.Level) &&
		h.keep(ctx, rc, r) { // recorder.go; a request level (reqlevel.go) writes it instead
		return nil // kept; after Close the record goes on, and the closed ring refuses it
	}
	b := bufPool.Get().(*buffer)
	h.core.logged.add(r.Level, b) // levelcounts.go
	if h.rec != nil {
		if h.core.stack.want(r.Level) {
			r, _, _ = h.withStack(r) // stack.go
		}
		return h.handleRecord(ctx, r, b)
	}
	h.encodeRecord(ctx, r, b)
	if rc == nil || !rc.triggers(r.Level) {
		return h.enqueue(b, r.Level, r.Message)
	}
	b, kept := h.withKept(ctx, rc, b) // recorder.go: the kept records first
	err := h.enqueue(b, r.Level, r.Message)
	rc.settle(kept, err) // written with the trigger, or lost with it
	return err
}

// encodeRecord encodes r into b.data, with the Context fields and the stack
// trace.
func (h *Handler) encodeRecord(ctx context.Context, r slog.Record, b *buffer) {
	top, below := "", "" // the stack trace: a top-level field, or Console's lines after the record's
	if h.core.stack.want(r.Level) {
		r, top, below = h.withStack(r) // stack.go
	}
	fields := h.contextFields(ctx, b)
	if top != "" {
		if h.core.context == nil {
			b.fields.reset(false)
		}
		b.fields.AddAttr(slog.String(stackTraceKey, top))
		fields = b.fields.attrs
	}
	b.room = h.core.room // sequence.go
	b.data = h.enc.AppendRecord(b.data[:b.room], &r, fields)
	if below != "" {
		b.data = append(b.data, below...)
		b.data = append(b.data, '\n')
	}
}

// handleAttrs is Handle for a record made of t, level, msg and attrs,
// without building a slog.Record: a Record keeps five attributes inline
// and allocates for more, while this path writes attrs straight from the
// slice. The output is the same as Handle's for such a record (PC 0: no
// source). attrs are not retained. Bridges that convert records from
// other APIs (otelbridge) reach it through core.HandleAttrs.
func (h *Handler) handleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if h.stateful || h.rec != nil || h.core.stack.want(level) || h.core.recorder != nil {
		// WithAttrs/WithGroup state sits between top-level fields and the
		// record's attributes: only a Record puts attrs after it.
		r := slog.NewRecord(t, level, msg, 0)
		r.AddAttrs(attrs...)
		return h.Handle(ctx, r) // samples, and adds the stack trace
	}
	if h.core.sample.refuse(t, level, msg, h.name) {
		return nil // sample.go: counted in Stats.Sampled
	}
	b := bufPool.Get().(*buffer)
	h.core.logged.add(level, b)
	extra := attrs
	if fields := h.contextFields(ctx, b); len(fields) > 0 {
		b.extra = append(append(b.extra[:0], fields...), attrs...)
		extra = b.extra
	}
	// Without WithAttrs/WithGroup state, top-level extra attributes land
	// exactly where a record's attributes would (after the built-ins and
	// the logger name), with the same ReplaceAttr groups (none).
	b.room = h.core.room // sequence.go
	b.data = h.enc.Append(b.data[:b.room], slog.NewRecord(t, level, msg, 0), extra)
	return h.enqueue(b, level, msg)
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
// levels at or above SyncLevel. Records at or above slog.LevelError are
// written to the output before it returns (written through, or waited for),
// so that `slog.Error(...); os.Exit(1)` keeps the line, in every overflow
// mode (see Options.errorsWritten), when the output can write it within
// the Error wait's bound.
//
// With h.bound set every wait ends when it ends: a wait for room drops the
// record (ErrDropped, counted), a wait for its write or sync returns
// bound's error with the record queued. Handlers made by NewHandler have
// none: a caller's context (a request's, say) must not cost it its lines.
// msg is the record's message, for the report of a record after Close.
func (h *Handler) enqueue(b *buffer, level slog.Level, msg string) error {
	syncLevel := levelNow(h.core.syncLevel)
	if h.core.seq && b.room == 0 {
		b.data = withSeqRoom(b.data) // sequence.go: a line encoded without the room
	}
	var err error
	switch {
	case level >= slog.LevelError && level < syncLevel && h.core.errsKept:
		if h.bound != nil {
			err = h.core.bus.EnqueueWrittenCtx(h.bound, b.data)
		} else {
			err = h.core.bus.EnqueueWritten(b.data)
		}
	case h.bound != nil:
		err = h.core.bus.EnqueueUntil(b.data, h.bound.Done())
	default:
		err = h.core.bus.Enqueue(b.data)
	}
	b.release()
	switch err {
	case nil:
	case bus.ErrClosed:
		h.core.noteClosed(level, msg) // closing.go: the first one is reported
		return ErrClosed
	case bus.ErrDropped:
		return ErrDropped
	default:
		return publicErr(err)
	}
	if level >= syncLevel {
		// The caller may be about to exit: sync regardless of ctx, but
		// never longer than the bus's bound (a hung output).
		ctx := h.bound
		if ctx == nil {
			ctx = context.Background()
		}
		return h.syncBounded(ctx)
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
	h2.grouped = true
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
// to the output, and synced where the output has a Sync method, or after 5
// seconds (as Close): then it returns an error matching
// context.DeadlineExceeded, and the records stay queued. If the output
// fails, it returns the error: after the batch was given up (its records
// counted in Stats.Failed), or, with Options.WriteAttempts above the
// default, after the default four attempts while the records stay queued
// and are retried (the error then matches ErrRetrying). Called after
// Close, it waits for Close's drain and returns an error wrapping
// ErrClosed (and Close's error, if any).
func (h *Handler) Flush() error {
	return h.FlushContext(context.Background())
}

// publicErr is a bus error as the handler returns it: an output error
// answered while its records are still retried also matches ErrRetrying.
func publicErr(err error) error {
	if err != nil && errors.Is(err, bus.ErrRetrying) {
		return retryingError{err}
	}
	return err
}

// retryingError is an output error that also matches ErrRetrying.
type retryingError struct{ error }

func (e retryingError) Unwrap() []error { return []error{e.error, ErrRetrying} }

// FlushContext is Flush bounded by ctx, or by Flush's own bound when ctx
// has no deadline.
func (h *Handler) FlushContext(ctx context.Context) error {
	closed := h.core.bus.Closed()
	err := h.flushBounded(ctx)
	if closed {
		return flushedAfterClose(err)
	}
	return err
}

// flushBounded is the drain of FlushContext: bounded by ctx, or by
// Flush's own bound when ctx has no deadline.
func (h *Handler) flushBounded(ctx context.Context) error {
	if _, ok := ctx.Deadline(); ok {
		return publicErr(h.core.bus.Flush(ctx))
	}
	bounded, cancel := context.WithTimeout(ctx, defaultCloseTimeout)
	defer cancel()
	err := h.core.bus.Flush(bounded)
	if err != nil && err == bounded.Err() && ctx.Err() == nil { // Flush's own bound, not ctx's cancellation
		return fmt.Errorf("asyncbus: flush %s: the output did not take the records within %v; they stay queued: %w",
			h.core.bus.Output(), defaultCloseTimeout, err)
	}
	return publicErr(err)
}

// flushedAfterClose is the answer of a Flush called after Close: flushing
// a closed handler is a shutdown-order mistake, so it never passes for
// success; err is what the drain answered (Close's verdict, or ctx's).
func flushedAfterClose(err error) error {
	if err == nil {
		return fmt.Errorf("%w: Flush after Close (the records were written by Close)", ErrClosed)
	}
	return fmt.Errorf("%w: Flush after Close: %w", ErrClosed, err)
}

// Stats returns the counters of the ring that h and every handler derived
// from the same NewHandler share. It is cheap and safe at any time.
func (h *Handler) Stats() Stats {
	s := statsFrom(h.core.bus.Stats())
	h.core.sample.addStats(&s)    // sample.go
	h.core.recorder.addStats(&s)  // recorder.go
	h.core.logged.addStats(&s)    // levelcounts.go
	h.core.addSeqStats(&s)        // sequence.go
	addDelayStats(&s, h.core.bus) // stats.go
	return s
}

// FieldWriter collects the top-level fields that Options.Context adds to one
// record. Its memory belongs to the handler and is reused for the next
// record: hooks must not keep it. AddBytes and AddString allocate nothing;
// AddAttr allocates only what building its Attr does.
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
	stripe uint32      // the stripe of the per-level counts this buffer adds to (levelcounts.go)
	room   int         // sequence.go: headroom for the number before the line in data (0 or bus.SeqRoom)
}

// maxPooledBuffer keeps one huge record from pinning its buffer forever.
const maxPooledBuffer = 64 << 10

var bufPool = sync.Pool{New: func() any { return &buffer{data: make([]byte, 0, 1024), stripe: newStripe()} }}

func (b *buffer) release() {
	b.room = 0
	if cap(b.data) > maxPooledBuffer {
		return
	}
	// Drop references to caller values before pooling. Only the slots the
	// hook filled: clearing all of arr (320 bytes with pointers, so with
	// write barriers during a GC) cost every record ~10% of Handle when no
	// Context hook is set. Past len(arr) fields, append moved them to the
	// heap, and all of arr was filled first.
	if n := len(b.fields.attrs); n > 0 {
		clear(b.fields.arr[:min(n, len(b.fields.arr))])
	}
	b.fields.attrs = nil
	clear(b.extra)
	b.extra = b.extra[:0]
	bufPool.Put(b)
}

// dropMarker returns the one drop marker: a line in the handler's format
// (level WARN, message encode.DropMessage, dropped=N). A user ReplaceAttr
// that panics on it must not hide the gap: the same line is then written
// without ReplaceAttr.
func dropMarker(enc *encode.Encoder, opts encode.Options) func([]byte, uint64) []byte {
	plain := enc
	if opts.ReplaceAttr != nil {
		opts.ReplaceAttr = nil
		plain = encode.New(opts)
	}
	return func(dst []byte, n uint64) (out []byte) {
		now := time.Now()
		if plain != enc {
			defer func() {
				if recover() != nil {
					out = plain.AppendDropMarker(dst[:0], now, n)
				}
			}()
		}
		return enc.AppendDropMarker(dst, now, n)
	}
}

var _ slog.Handler = (*Handler)(nil)
