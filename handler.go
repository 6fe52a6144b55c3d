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
	"github.com/asyncbus/asyncbus/internal/openlist"
	"github.com/asyncbus/asyncbus/internal/seqnum"
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
	tree    *tree
	enc     *encode.Encoder
	name    string
	slot    *levelSlot   // the level to compare against: one atomic load
	leveler slog.Leveler // non-nil only for a caller's dynamic Leveler (e.g. *slog.LevelVar)
	// attrsInRecord: a record's attributes must be a Record's, not a slice
	// (handleAttrs), because WithAttrs or WithGroup was applied or a sink
	// plugged in its encoder.
	attrsInRecord bool
	grouped       bool // WithGroup was applied: attributes land inside a group (core.Grouped)
	// bound, if not nil, ends every wait for the output when it ends (a
	// copy made by WithWaitContext; see enqueue).
	bound context.Context
	rec   Encoder // the output's own encoder (OpenWithEncoder); nil: enc
	// life is shared by every handler derived from one NewHandler and held
	// by nothing else (unclosed.go).
	life *lifeline
	// waitWrite: every record waits for its write as an Error record does
	// (the standard log package's handler, stdlog.go).
	waitWrite bool
}

// tree is what all handlers derived from one NewHandler share: the handler
// tree's bus, settings and features.
type tree struct {
	bus       *bus.Bus
	out       io.Writer // the output the bus writes to (connectOutput gives it its hooks)
	syncLevel slog.Leveler
	context   func(context.Context, *FieldWriter)
	rules     *LevelRules
	copyCtx   bool                            // ReplaceAttr is set: context field values are copied, not aliased
	closing   func(context.Context) time.Time // output.go: the output's Closer; nil: none
	errsKept  bool                            // callersWait: Error records are written before Handle returns
	sample    sampleState                     // sample.go: Options.Features.Sampler
	stack     stackState                      // stack.go: Options.Features.StackTraceLevel
	onError   func(error)                     // Options.OnError, defaulted (closing.go reports a record after Close)
	// closedNoted is set by the first record refused after Close (closing.go).
	closedNoted atomic.Bool
	recorder    *recorder       // recorder.go: Options.Features.FlightRecorder; nil: off
	logged      *levelCounts    // levelcounts.go: Stats.LoggedTrace and after
	listed      *openlist.Entry // closing.go: its place among the open handlers that shutdown.CloseAll closes
	seq         bool            // sequence.go: Options.Features.Sequence, records carry headroom for the number
	runEnd      atomic.Bool     // sequence.go: Close writes the run-end line; swapped to false by the first Close (once)
	runEndRoom  bool            // sequence.go: Drop or BlockTimeout: Close makes room for the run-end line first
	room        int             // sequence.go: the headroom the encode stage leaves (seqnum.Room when seq)
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
	h, _ := newHandler(w, opts, false, nil)
	return h
}

// newHandler is NewHandler; with strict, invalid options and a ring file
// that cannot be opened or recovered are returned as errors instead. own
// is the output's own Encoder (OpenWithEncoder, which plugs it in), or nil.
func newHandler(w io.Writer, opts *Options, strict bool, own Encoder) (*Handler, error) {
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
		SlogLevelNames: slogLevelNames(&o),
		Color:          useColor(o.Encoding.Color, w),
		LoggerKey:      o.Encoding.LoggerKey,
		UniqueKeys:     o.Encoding.UniqueKeys,
		SequenceKeys:   o.Features.Sequence && own == nil, // sequence.go: the numbers' keys win
	}
	enc := encode.New(encOpts)
	b, err := openBus(w, &o, busHooks(&o, enc, encOpts, own), strict)
	if err != nil {
		return nil, err
	}
	c := &tree{
		bus:       b,
		syncLevel: o.SyncLevel,
		context:   o.Features.Context,
		rules:     o.Rules,
		copyCtx:   o.ReplaceAttr != nil,
		errsKept:  callersWait(w),
		out:       w,
		onError:   o.OnError,
		logged:    newLevelCounts(),
		seq:       o.Features.Sequence,
	}
	if c.seq {
		c.room = seqnum.Room
		c.runEnd.Store(own == nil) // an own Encoder's numbers have no run-end line
		c.runEndRoom = o.Ring.Overflow == Drop || o.Ring.BlockTimeout > 0
	}
	if c.syncLevel == nil {
		c.syncLevel = LevelFatal
	}
	c.connectOutput(w) // output.go: Closer, Reporter, Backlogger
	h := &Handler{tree: c, enc: enc}
	c.recorder = newRecorder(o.Features.FlightRecorder, enc)      // recorder.go
	c.stack = newStackState(o.Features.StackTraceLevel, o.Format) // stack.go
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
	// sample.go: markers go through a copy of h without its lifeline, which
	// the sampler, and so the tree, must not keep reachable.
	marker := *h
	c.initSampling(o.Features.Sampler, &marker)
	c.listed = openlist.Add(c) // closing.go: taken off when closed; the tree, not h, which may become unreachable
	h.life = newLifeline(c)    // unclosed.go: closes the tree if every handler of it is dropped unclosed
	return h, nil
}

// openBus starts the bus for validated options o: on the ring file, if
// one is set and usable, else (reported, unless strict, which returns the
// error) on an in-memory ring.
func openBus(w io.Writer, o *Options, hooks outputHooks, strict bool) (*bus.Bus, error) {
	b, err := bus.New(w, o.busConfig(w, hooks))
	if err == nil {
		return b, nil
	}
	// Only a ring file can fail.
	if errors.Is(err, bus.ErrRingLocked) {
		err = fmt.Errorf("%w: %s", ErrRingLocked, o.Ring.File)
	}
	if strict {
		return nil, err
	}
	o.OnError(fmt.Errorf("asyncbus: ring file unusable, logging to an in-memory ring: %w", err))
	o.Ring.File = ""
	b, err = bus.New(w, o.busConfig(w, hooks))
	if err != nil {
		panic("asyncbus: in-memory ring failed: " + err.Error()) // cannot happen: only ring files fail
	}
	return b, nil
}

// Enabled reports whether records at level l are written (or kept by the
// flight recorder): l is at or above the handler's level, or at or above
// the level ctx carries for its request (ctxattrs.WithLevel), which lowers
// the threshold and never raises it. It is one atomic load (or one call of
// a dynamic Options.Level) and allocates nothing; a record below the level
// reads ctx only once some request level was set in the process.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.writes(l) || (h.tree.recorder != nil && h.tree.recorder.keeps(l)) || requested(ctx, l)
}

// writes reports whether records at level l are written: l is at or above
// the handler's level.
func (h *Handler) writes(l slog.Level) bool {
	if h.leveler != nil {
		return l >= h.leveler.Level()
	}
	return l >= h.slot.Level()
}

// enqueue puts the encoded line in b on the bus, releases b, and syncs for
// levels at or above SyncLevel. Records at or above slog.LevelError wait
// until the drainer has written them, so that `slog.Error(...);
// os.Exit(1)` keeps the line, in every overflow mode (see callersWait),
// when the output can write it within the Error wait's bound.
//
// With h.bound set every wait ends when it ends: a wait for room drops the
// record (ErrDropped, counted), a wait for its write or sync returns
// bound's error with the record queued. Handlers made by NewHandler have
// none: a caller's context (a request's, say) must not cost it its lines.
// msg is the record's message, for the report of a record after Close.
func (h *Handler) enqueue(b *buffer, level slog.Level, msg string) error {
	return h.enqueueBytes(b, b.data, level, msg)
}

// enqueueBytes is enqueue for the record p, which the bus copies: b.data,
// or a line another logger encoded (writeLine), put on the ring without a
// copy into b first. b is released once the bus has taken p.
func (h *Handler) enqueueBytes(b *buffer, p []byte, level slog.Level, msg string) error {
	syncLevel := levelNow(h.tree.syncLevel)
	if h.tree.seq && b.room == 0 {
		p = h.withSeqRoom(b, p) // sequence.go: a line encoded without the room
	}
	var err error
	switch {
	case (level >= slog.LevelError || h.waitWrite) && level < syncLevel && h.tree.errsKept:
		if h.bound != nil {
			err = h.tree.bus.EnqueueWrittenCtx(h.bound, p)
		} else {
			err = h.tree.bus.EnqueueWritten(p)
		}
	case h.bound != nil:
		err = h.tree.bus.EnqueueUntil(h.bound, p)
	default:
		err = h.tree.bus.Enqueue(p)
	}
	b.release()
	switch err {
	case nil:
	case bus.ErrClosed:
		h.tree.noteClosed(level, msg) // closing.go: the first one is reported
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
	h2.attrsInRecord = true
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
	h2.attrsInRecord = true
	return &h2
}

// plug makes enc the record encoder of h, a handler not yet shared (a
// sink's NewHandler, through recordencoder.go): the encode stage's choice,
// made once here. The stack trace then becomes the record's last
// attribute, which enc writes as it writes any.
func (h *Handler) plug(enc Encoder) {
	h.rec = enc
	h.attrsInRecord = true
	h.tree.stack.place = stackLast
}

// Named returns a handler for the logger called name below h's own name
// (joined with "."), which writes the name under Options.Encoding.LoggerKey and, when
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
	if h.tree.rules != nil {
		h2.slot = h.tree.rules.slot(full)
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
// counted in Stats.Failed), or, with Options.Retry.Attempts above the
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
	closed := h.tree.bus.Closed()
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
		return publicErr(h.tree.bus.Flush(ctx))
	}
	bounded, cancel := context.WithTimeout(ctx, defaultCloseTimeout)
	defer cancel()
	err := h.tree.bus.Flush(bounded)
	if err != nil && err == bounded.Err() && ctx.Err() == nil { // Flush's own bound, not ctx's cancellation
		return fmt.Errorf("asyncbus: flush %s: the output did not take the records within %v; they stay queued: %w",
			h.tree.bus.Output(), defaultCloseTimeout, err)
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
	s := statsFrom(h.tree.bus.Stats())
	h.tree.sample.addStats(&s)    // sample.go
	h.tree.recorder.addStats(&s)  // recorder.go
	h.tree.logged.addStats(&s)    // levelcounts.go
	h.tree.addSeqStats(&s)        // sequence.go
	addDelayStats(&s, h.tree.bus) // stats.go
	return s
}

// FieldWriter collects the top-level fields that Options.Features.Context adds to one
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
	room   int         // sequence.go: headroom for the number before the line in data (0 or seqnum.Room)
}

// maxPooledBuffer keeps one huge record from pinning its buffer forever.
const maxPooledBuffer = 64 << 10

var bufPool = sync.Pool{New: func() any { return &buffer{data: make([]byte, 0, 1024), stripe: newStripe()} }}

func (b *buffer) release() {
	b.room = 0
	if cap(b.data) > maxPooledBuffer {
		return
	}
	// Drop references to caller values before pooling: only the slots the
	// hook filled, since clearing all of arr costs every record (see
	// docs/design.md). Past len(arr) fields, append moved them to the
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
