package asyncbus

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"
)

// defaultCloseTimeout bounds Close, CloseDefault and Flush, and
// CloseContext and FlushContext given a context without a deadline (see
// docs/design.md for the choice of 5 s).
const defaultCloseTimeout = 5 * time.Second

// closerGrace is how long Close waits past the shutdown bound an output
// that implements Closer announced, for the output's last call to return.
const closerGrace = time.Second

// Close flushes and stops the drainer, waiting at most 5 seconds (a
// deferred Close does not hang the program on a dead output), or, for an
// output that bounds its own shutdown (otlpsink's CloseTimeout), that bound
// and one second more. It is idempotent and safe to call from several goroutines; Handle
// afterwards returns ErrClosed (and the first such record is reported to
// Options.OnError). It does not close the output writer.
//
// Close returns nil only when every record accepted was written. Otherwise
// its error is the run's verdict, whatever Flush reported before: when
// records failed at any time (Stats.Failed), it names the output and its
// last error and says how many records failed in all ("asyncbus: write
// <output>: <error> (N records failed)"); when the final sync failed, it
// says so; when the bound expired first (a hung or too slow output), it
// says so, with the records and bytes not written, which Stats counts as
// Failed (the error matches context.DeadlineExceeded). Every call returns
// the same error.
func (h *Handler) Close() error {
	return h.CloseContext(context.Background())
}

// CloseContext is Close bounded by ctx, or by Close's own bound when ctx
// has no deadline: if ctx ends first, records still queued are counted as
// failed and the error says so (it matches ctx's error).
func (h *Handler) CloseContext(ctx context.Context) error {
	h.life.cleanup.Stop() // unclosed.go: closed on purpose, so not reported
	err := h.tree.CloseContext(ctx)
	runtime.KeepAlive(h.life) // reachable across Stop, as Stop requires
	return err
}

// CloseContext is Handler.CloseContext for every handler of the tree; it
// is what shutdown.CloseAll and an unreachable handler's cleanup call.
func (c *tree) CloseContext(ctx context.Context) error {
	// No sync.Once here: the bus's Close is idempotent (and so is the
	// output's Closing), and an OnError that calls Close while
	// another Close waits for its reports must not wait behind that Close.
	c.sample.closing.Store(true) // sample.go: later records reach the bus and get ErrClosed
	c.sample.flushMarkers()      // sample.go: pending markers go out before the bus closes
	bound := time.Now().Add(defaultCloseTimeout)
	if until, ok := c.notifyClosing(ctx); ok { // output.go
		bound = until.Add(closerGrace)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, bound)
		defer cancel()
	}
	c.endRun(ctx) // sequence.go: the run-end line, last
	err := c.bus.Close(ctx)
	// After the ring closed: a record the closed recorder refuses goes on
	// to the ring, which refuses and counts it.
	c.recorder.close() // recorder.go: what it still keeps counts as expired
	c.listed.Remove()  // after the drain: shutdown.CloseAll, running now, waits for it too
	return err
}

// CloseDefault closes the Handler behind slog.Default(): the one-line
// shutdown that matches the one-line setup.
//
//	asyncbus.SetDefault(asyncbus.NewHandler(os.Stdout, nil))
//	defer asyncbus.CloseDefault()
//
// It returns Close's error, or an error when the default logger's handler
// is not a *Handler: neither SetDefault nor slog.SetDefault was called, or was given
// another handler. A handler derived with WithAttrs, WithGroup or Named
// (slog.Logger.With included) is a *Handler, and closing it closes every
// handler of its NewHandler. A handler that wraps one, such as a
// slog.MultiHandler or a sampling.Handler, offers no way to reach it: keep
// the *Handler and Close it, give the Sampler to Options.Features.Sampler (which
// keeps the default a *Handler), or close every open handler with
// shutdown.CloseAll. It waits as long as Close; for another
// bound, call CloseContext on slog.Default().Handler().(*asyncbus.Handler).
//
// The default logger stays in place: records logged after CloseDefault are
// refused (ErrClosed) and counted, and the first is reported to
// Options.OnError.
func CloseDefault() error {
	dh := slog.Default().Handler()
	h, ok := dh.(*Handler)
	if !ok {
		return fmt.Errorf("asyncbus: CloseDefault: slog.Default()'s handler is a %T, not an *asyncbus.Handler (not set with slog.SetDefault, or wrapped)", dh)
	}
	return h.Close()
}

// maxClosedMsg bounds the message quoted in the report of a record logged
// after Close.
const maxClosedMsg = 200

// noteClosed reports the first record refused because the handler was
// closed, once for every handler of one NewHandler: logging after Close is
// a shutdown-order mistake that Stats.DroppedClosed alone would hide. Later
// records are only counted. The report goes through the bus's reporter (or
// after its last report), so OnError is never called twice at once and the
// log call does not wait for it.
func (c *tree) noteClosed(level slog.Level, msg string) {
	// CompareAndSwap: of records refused at the same moment exactly one
	// reports, and the flag never goes back, so there is one report.
	if !c.closedNoted.CompareAndSwap(false, true) {
		return
	}
	if len(msg) > maxClosedMsg {
		msg = strings.ToValidUTF8(msg[:maxClosedMsg], "") + "…"
	}
	c.bus.ReportLate(fmt.Errorf("%w: a record logged after Close was dropped (level %s, msg %q); it and any later ones are counted in Stats.DroppedClosed, and only this first one is reported",
		ErrClosed, levelName(level), msg))
}
