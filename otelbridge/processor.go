package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	sdklog "go.opentelemetry.io/otel/sdk/log"
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
// Export looks at ctx before each record: once ctx has ended it hands over
// no more records and returns an error that wraps ctx's, says how many
// records were not exported, and is joined with any handler failures. It
// cannot interrupt a Handle call that is waiting, and an *asyncbus.Handler
// waits however long its output takes: in Block mode without BlockTimeout
// (its default) for room while its ring is full and for the write of a
// record at slog.LevelError or above, and in every mode for the write and
// sync of a record at or above Options.SyncLevel (asyncbus.LevelFatal,
// OpenTelemetry's FATAL, by default). With a hung output such an Export
// returns only when the output moves again, past its deadline. To bound
// Export by its deadline, give that handler a BlockTimeout (a record still
// waiting for room when it expires is dropped, counted in Stats.Dropped and
// reported as asyncbus.ErrDropped) or the Drop policy, and leave FATAL
// records out of the export or raise SyncLevel above them.
func (e *Exporter) Export(ctx context.Context, records []sdklog.Record) error {
	if e.down.Load() {
		return sdklog.ErrExporterShutdown
	}
	var (
		first  error
		failed int
	)
	for i := range records {
		if err := ctx.Err(); err != nil {
			left := fmt.Errorf("otelbridge: %d of %d records not exported: %w", len(records)-i, len(records), err)
			return errors.Join(left, failure(first, failed, len(records)))
		}
		r := &records[i]
		if !e.h.Enabled(ctx, level(r.Severity())) {
			continue
		}
		if err := e.conv.handle(ctx, e.h, r); err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	return failure(first, failed, len(records))
}

func failure(first error, failed, total int) error {
	if first == nil {
		return nil
	}
	return fmt.Errorf("otelbridge: %d of %d records failed: %w", failed, total, first)
}

// Shutdown flushes the handler (when it has a Flush method); afterwards Export
// returns [sdklog.ErrExporterShutdown]. Only the first call acts; it returns
// ctx's error if ctx ends first. The handler itself is not closed.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.shutdown(ctx) }

// ForceFlush flushes the handler when it has a Flush method, honouring ctx.
// It is a no-op after Shutdown.
func (e *Exporter) ForceFlush(ctx context.Context) error { return e.forceFlush(ctx) }
