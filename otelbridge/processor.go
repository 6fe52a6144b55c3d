package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/plural"
)

// flusher is implemented by handlers that can push everything they have
// accepted to their sink, such as *asyncbus.Handler.
type flusher interface{ Flush() error }

// contextFlusher is a flusher that can itself stop waiting when a context
// ends (*asyncbus.Handler's FlushContext); preferred when present.
type contextFlusher interface {
	FlushContext(ctx context.Context) error
}

// lifecycle is the Shutdown/ForceFlush logic shared by Processor and Exporter.
type lifecycle struct {
	h slog.Handler
	// down is set once by Shutdown; an atomic so that the hot path (OnEmit,
	// Export) reads it without a lock. A record racing with Shutdown is
	// either handled and flushed or handled after the flush; the SDK itself
	// waits for in-flight OnEmit calls before it calls Shutdown.
	down atomic.Bool
}

// flush flushes the handler if it can be flushed, giving up (but leaving the
// flush running) when ctx ends first.
func (l *lifecycle) flush(ctx context.Context) error {
	if cf, ok := l.h.(contextFlusher); ok {
		if err := ctx.Err(); err != nil {
			return err
		}
		return cf.FlushContext(ctx)
	}
	f, ok := l.h.(flusher)
	if !ok {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil { // no deadline or cancellation: flush inline.
		return f.Flush()
	}
	done := make(chan error, 1) // buffered: the flush goroutine never blocks if we left.
	go func() { done <- f.Flush() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown marks l down and flushes; only the first call does anything.
func (l *lifecycle) shutdown(ctx context.Context) error {
	if !l.down.CompareAndSwap(false, true) {
		return nil
	}
	return l.flush(ctx)
}

func (l *lifecycle) forceFlush(ctx context.Context) error {
	if l.down.Load() {
		return nil
	}
	return l.flush(ctx)
}

// Processor is an sdk/log Processor that converts each record and hands it
// to a slog.Handler at once. It does not queue, clone or retain records: the
// handler (an *asyncbus.Handler) is the asynchronous stage.
type Processor struct {
	conv *converter
	lifecycle
}

var _ sdklog.Processor = (*Processor)(nil)

// NewProcessor returns a Processor writing to h. h must not be nil.
func NewProcessor(h slog.Handler, opts ...Option) *Processor {
	if h == nil {
		panic("otelbridge: NewProcessor with nil handler")
	}
	return &Processor{conv: newConverter(opts), lifecycle: lifecycle{h: h}}
}

// Enabled reports whether the handler is enabled at the record's level; it
// is false after Shutdown.
func (p *Processor) Enabled(ctx context.Context, param sdklog.EnabledParameters) bool {
	return !p.down.Load() && p.h.Enabled(ctx, level(param.Severity))
}

// OnEmit converts r and calls the handler's Handle with it before returning;
// it keeps no reference to r. It does nothing after Shutdown, and records the
// handler is not enabled for are skipped. The handler's error is returned.
func (p *Processor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	if r == nil || p.down.Load() || !p.h.Enabled(ctx, level(r.Severity())) {
		return nil
	}
	return p.conv.handle(ctx, p.h, r)
}

// Shutdown flushes the handler (when it has a Flush method) and makes OnEmit
// a no-op. Only the first call acts; it returns ctx's error if ctx ends first.
// The handler itself is not closed: its owner closes it.
func (p *Processor) Shutdown(ctx context.Context) error { return p.shutdown(ctx) }

// ForceFlush flushes the handler when it has a Flush method, honouring ctx.
// It is a no-op after Shutdown.
func (p *Processor) ForceFlush(ctx context.Context) error { return p.forceFlush(ctx) }

// Exporter is an sdk/log Exporter, for use behind the SDK's BatchProcessor,
// that converts each exported record and hands it to a slog.Handler. It
// never retains the records slice.
type Exporter struct {
	conv *converter
	lifecycle
}

var _ sdklog.Exporter = (*Exporter)(nil)

// NewExporter returns an Exporter writing to h. h must not be nil.
func NewExporter(h slog.Handler, opts ...Option) *Exporter {
	if h == nil {
		panic("otelbridge: NewExporter with nil handler")
	}
	return &Exporter{conv: newConverter(opts), lifecycle: lifecycle{h: h}}
}

// Export hands every enabled record to the handler, in order. After Shutdown
// it returns [sdklog.ErrExporterShutdown]. Handler failures are reported as
// one error counting them and wrapping the first.
//
// Export honours ctx's deadline. With an *asyncbus.Handler every wait for
// the output ends when ctx ends: a record still waiting for room in the
// ring (Block mode) is dropped, counted in the handler's Stats.Dropped and
// marked in the output; a wait for an Error record's write or a SyncLevel
// record's sync stops, the record staying queued. Records after that are
// still handed over, without waiting: each is queued if there is room and
// dropped and counted if not, so every record is accounted for. The error
// then counts the failures and wraps ctx's. One wait is not bounded: a
// handler with Options.Features.Sampler writes the sampler's "suppressed" markers
// while it samples a record, and such a marker waits for room like any
// Handle; with a Sampler and a hung output, Export can wait there. With another handler, Export
// looks at ctx before each record: once it has ended it hands over no more
// records and returns an error that wraps ctx's and says how many records
// were not exported (a Handle call already waiting is not interrupted).
func (e *Exporter) Export(ctx context.Context, records []sdklog.Record) error {
	if e.down.Load() {
		return sdklog.ErrExporterShutdown
	}
	h, bounded := e.h, false
	if ah, ok := e.h.(*asyncbus.Handler); ok {
		h, bounded = ah.WithWaitContext(ctx), true // one copy per call, not per record
	}
	var (
		first  error
		failed int
	)
	for i := range records {
		if err := ctx.Err(); err != nil && !bounded {
			left := fmt.Errorf("otelbridge: %d of %s not exported: %w", len(records)-i, plural.Count(len(records), "record", "records"), err)
			return errors.Join(left, failure(first, failed, len(records)))
		}
		r := &records[i]
		if !h.Enabled(ctx, level(r.Severity())) {
			continue
		}
		if err := e.conv.handle(ctx, h, r); err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	err := failure(first, failed, len(records))
	if cerr := ctx.Err(); err != nil && cerr != nil {
		err = errors.Join(fmt.Errorf("otelbridge: export ran past its deadline: %w", cerr), err)
	}
	return err
}

func failure(first error, failed, total int) error {
	if first == nil {
		return nil
	}
	return fmt.Errorf("otelbridge: %d of %s failed: %w", failed, plural.Count(total, "record", "records"), first)
}

// Shutdown flushes the handler (when it has a Flush method); afterwards Export
// returns [sdklog.ErrExporterShutdown]. Only the first call acts; it returns
// ctx's error if ctx ends first. The handler itself is not closed.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.shutdown(ctx) }

// ForceFlush flushes the handler when it has a Flush method, honouring ctx.
// It is a no-op after Shutdown.
func (e *Exporter) ForceFlush(ctx context.Context) error { return e.forceFlush(ctx) }
