package asyncbus

import (
	"context"
	"log/slog"
	"time"
)

// Handle encodes r on the caller's goroutine and queues it for the drainer.
// It returns nil without waiting for the write, except that records at or
// above slog.LevelError are in the output (not synced) and records at or
// above Options.SyncLevel are written and synced before it returns, and
// that in Block mode without Ring.BlockTimeout (the default) a quiet
// handler writes, or briefly waits for, each record, so that a program
// returning from main without Close keeps its last lines. Every such wait
// is bounded (see the README's guarantees). It returns ErrClosed after
// Close (the first such record is also reported to Options.OnError) and
// ErrDropped when the ring was full under Drop or past Ring.BlockTimeout.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	return h.handle(ctx, &r, nil)
}

// handleAttrs is Handle for a record made of t, level, msg and attrs
// (otelbridge's attribute path): the same pipeline, with attrs written
// straight from the slice where the encoder can take them so, since a
// Record keeps five attributes inline and allocates for more. The output
// is Handle's for such a record (PC 0: no source). attrs are not retained.
func (h *Handler) handleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	r := slog.NewRecord(t, level, msg, 0)
	if len(attrs) == 0 || h.attrsInRecord || h.tree.stack.want(level) {
		// WithAttrs/WithGroup state sits between the top-level fields and
		// the record's attributes, and a plugged encoder and the stack
		// trace take a Record: only a Record puts attrs after them.
		r.AddAttrs(attrs...)
		return h.handle(ctx, &r, nil)
	}
	return h.handle(ctx, &r, attrs)
}

// handle runs one record through the pipeline's stages, in order, each
// entered once (docs/design.md, "The pipeline"). attrs, when not nil, are
// the record's attributes, r holding none (handleAttrs).
func (h *Handler) handle(ctx context.Context, r *slog.Record, attrs []slog.Attr) error {
	keep := h.kept(ctx, r.Level)                                  // level gate and request level (reqlevel.go)
	if h.tree.sample.refuse(r.Time, r.Level, r.Message, h.name) { // sampler (sample.go)
		return nil // counted in Stats.Sampled
	}
	if keep && h.keep(ctx, r, attrs) { // flight recorder: keep (recorder.go)
		return nil // after Close keep refuses, and the closed ring refuses the record
	}
	b := h.encode(ctx, r, attrs)                // encode: context fields, stack trace (stack.go)
	return h.submit(ctx, b, r.Level, r.Message) // the kept records on a trigger, then the bus
}

// kept is the level gate: it reports whether a record at level l, which
// Enabled let through, goes to the flight recorder instead of the output:
// it is below the handler's level and at or above the recorder's, and no
// request level (ctxattrs.WithLevel) asks for it to be written.
func (h *Handler) kept(ctx context.Context, l slog.Level) bool {
	rc := h.tree.recorder
	return rc != nil && !h.writes(l) && rc.keeps(l) && !requested(ctx, l)
}

// encode is the encode stage: it returns a buffer from bufPool holding r
// (with attrs, when not nil, as its attributes) encoded with the Context
// fields and, at Features.StackTraceLevel, a stack trace.
func (h *Handler) encode(ctx context.Context, r *slog.Record, attrs []slog.Attr) *buffer {
	b := bufPool.Get().(*buffer)
	fields := h.contextFields(ctx, b)
	if attrs != nil {
		// Without WithAttrs/WithGroup state (handleAttrs), top-level
		// attributes land exactly where a record's would (after the
		// built-ins and the logger name), with the same ReplaceAttr groups.
		extra := attrs
		if len(fields) > 0 {
			b.extra = append(append(b.extra[:0], fields...), attrs...)
			extra = b.extra
		}
		b.room = h.tree.room // sequence.go: the number's headroom
		b.data = h.enc.Append(b.data[:b.room], *r, extra)
		return b
	}
	var below string
	if h.tree.stack.want(r.Level) {
		fields, below = h.addStack(r, b, fields)
	}
	h.appendRecord(ctx, r, fields, b)
	if below != "" {
		b.data = append(b.data, below...)
		b.data = append(b.data, '\n')
	}
	return b
}

// appendRecord encodes r with the top-level fields into b.data, with the
// encoder chosen when the handler was built: the built-in one, or the
// record encoder a sink plugged in (recordencoder.go).
func (h *Handler) appendRecord(ctx context.Context, r *slog.Record, fields []slog.Attr, b *buffer) {
	b.room = h.tree.room // sequence.go: the number's headroom
	if h.rec != nil {
		b.data = h.rec.AppendRecord(b.data[:b.room], ctx, *r, h.name, fields)
		return
	}
	b.data = h.enc.AppendRecord(b.data[:b.room], r, fields)
}

// contextFields runs the Features.Context hook into b's FieldWriter.
func (h *Handler) contextFields(ctx context.Context, b *buffer) []slog.Attr {
	hook := h.tree.context
	if hook == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.fields.reset(h.tree.copyCtx)
	hook(ctx, &b.fields)
	return b.fields.attrs
}

// submit is the last stage: it counts the encoded record in b by level,
// puts the flight recorder's kept records before it when it is a trigger,
// and enqueues it (enqueue), releasing b.
func (h *Handler) submit(ctx context.Context, b *buffer, level slog.Level, msg string) error {
	h.tree.logged.add(level, b) // levelcounts.go
	rc := h.tree.recorder
	if rc == nil || !rc.triggers(level) {
		return h.enqueue(b, level, msg)
	}
	b, n := h.withKept(ctx, rc, b) // recorder.go: the kept records first, as one entry
	err := h.enqueue(b, level, msg)
	rc.settle(n, err) // written with the trigger, or lost with it
	return err
}
