package asyncbus

import (
	"context"
	"io"
	"time"

	"github.com/asyncbus/asyncbus/internal/bus"
)

// The optional interfaces of an output. NewHandler's output is any
// io.Writer; when it also implements one of these, the handler uses it as
// each one says (see also "Writing an output" in the package
// documentation). They are checked once, when the handler is made.

// BatchWriter is implemented by an output that takes a whole batch of
// records in one call (filesink.File, with writev): each slice is one
// whole record, valid only during the call (it aliases the ring), and
// WriteBatch returns how many leading records it wrote completely. When it
// fails part-way through a record it completes that record or cuts it
// back, and returns the error; the handler retries the rest.
type BatchWriter interface {
	WriteBatch(records [][]byte) (written int, err error)
}

// Syncer is implemented by an output that can flush to stable storage
// (*os.File does): Flush, Close and records at or above Options.SyncLevel
// call Sync.
type Syncer interface {
	Sync() error
}

// Closer is implemented by an output that retries over the network and
// bounds its own shutdown (otlpsink.Sink): the handler tells it when its
// Close begins, and never makes a caller wait for it (no write on the
// caller's goroutine, no wait for an Error record's write), since a log
// call must not wait for a collector's round trips and back-off.
type Closer interface {
	// Closing is called when the handler's Close begins, with Close's
	// context, and again by every later Close call (the first call's
	// context counts); it returns when the output will have given up its
	// last call, which Close waits for (and one second more) when its
	// context has no deadline.
	Closing(ctx context.Context) (giveUpAt time.Time)
}

// Reporter is implemented by an output that reports its own events
// (retries, partial successes) to the handler's Options.OnError.
type Reporter interface {
	// SetReport is called once, before the handler is returned, with
	// report, which delivers an error to OnError one at a time with the
	// handler's own reports (Close waits for them). report returns false,
	// taking nothing, once the handler has closed: the output then
	// delivers the error itself.
	SetReport(report func(error) bool)
}

// Backlogger is implemented by an output that reports how many records
// waited for it (otlpsink's recovery report).
type Backlogger interface {
	// SetBacklog is called once, before the handler is returned, with
	// backlog, which counts the records queued behind the batch in the
	// output's hands; backlog may be called only from within the output's
	// Write or WriteBatch.
	SetBacklog(backlog func() uint64)
}

// The default retries of a failing output (Options.Retry.Attempts and
// Options.Retry.MaxBackoff): a batch is written up to DefaultWriteAttempts
// times, the back-off doubling from 1 ms up to DefaultWriteRetryMax.
const (
	DefaultWriteAttempts = bus.DefaultWriteAttempts
	DefaultWriteRetryMax = bus.DefaultRetryMax
)

// The bus detects batches and syncs through its own interfaces: the public
// ones must stay the same method sets.
var (
	_ bus.BatchWriter = BatchWriter(nil)
	_ bus.Syncer      = Syncer(nil)
	_ BatchWriter     = bus.BatchWriter(nil)
	_ Syncer          = bus.Syncer(nil)
)

// connectOutput gives w, the output of the handler being made, the hooks
// it asks for (Closer, Reporter, Backlogger). It runs before the handler
// is shared.
func (c *tree) connectOutput(w io.Writer) {
	if cl, ok := w.(Closer); ok {
		c.closing = cl.Closing
	}
	if r, ok := w.(Reporter); ok {
		r.SetReport(c.bus.Report)
	}
	if bl, ok := w.(Backlogger); ok {
		bl.SetBacklog(c.bus.Backlog)
	}
}

// notifyClosing tells an output that implements Closer that Close began,
// with Close's context, and returns when it will have given up.
func (c *tree) notifyClosing(ctx context.Context) (time.Time, bool) {
	if c.closing == nil {
		return time.Time{}, false
	}
	return c.closing(ctx), true
}
