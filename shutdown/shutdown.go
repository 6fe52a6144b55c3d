// Package shutdown flushes and closes every open asyncbus handler of the
// process at once, wherever it is held: inside a slog.MultiHandler, a
// sampling.Handler, a logr logger, a logwriter.Writer, or nowhere the
// program can still reach. OnSignal does it when the process is told to
// stop (a Kubernetes pod's SIGTERM), then lets the signal end the process
// as it would have.
package shutdown

import (
	"context"
	"errors"
	"time"

	"github.com/asyncbus/asyncbus/internal/openlist"
)

// DefaultBound is how long CloseAll waits in all, given a context without
// a deadline, and OnSignal given a bound of 0: Handler.Close's own bound.
const DefaultBound = 5 * time.Second

// CloseAll closes every asyncbus handler open now (made by
// asyncbus.NewHandler or asyncbus.Open, and not yet closed), the most
// recently opened first, and returns their errors joined. Each Close
// writes what its handler queued and stops its drainer, as
// Handler.CloseContext does; a handler whose Close ran before is not
// closed again, and one whose Close is running is waited for.
//
// ctx bounds the whole call (without a deadline, DefaultBound does), and
// no handler may take more than its share of what is left: when a
// handler's turn comes, with n handlers still to close, its Close is
// bounded by a 1/n part of the time to the deadline (the time a handler
// does not use goes to those after it). So a hung output delays the
// others by its share only; its queued records are counted as failed, and
// its error says so (it matches context.DeadlineExceeded). Handlers opened
// while CloseAll runs are left open. It does not close the outputs under
// the handlers (files, sinks).
func CloseAll(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultBound)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	open := openlist.NewestFirst()
	var errs []error
	for i, h := range open {
		share := time.Until(deadline) / time.Duration(len(open)-i)
		hctx, cancel := context.WithTimeout(ctx, share)
		errs = append(errs, h.CloseContext(hctx))
		cancel()
	}
	return errors.Join(errs...)
}
