package bus

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/asyncbus/asyncbus/internal/reporter"
)

type flushReq struct {
	target uint64
	sync   bool       // Flush: sync the output once target is written; false: written is enough (EnqueueWritten)
	mark   bool       // Flush: its answer moves the "failures reported" mark; false: Sync and EnqueueWritten
	ch     chan error // buffered 1
}

// Flush returns once every record committed before the call has been handed
// to the output (or counted as failed), and the output Sync()ed if it is a
// Syncer: ctx.Err() if ctx ends first, a *OutputError if the sync failed or
// records failed since the previous Flush was answered (the next Flush
// always hears of a failure), and nil after Close has drained. With
// Config.WriteAttempts above the default, a Flush waiting for a batch still
// being retried is answered once the default attempts are spent, with a
// *OutputError marked Retrying (errors.Is ErrRetrying), the records queued.
// It is the one wait (waitWritten) bounded by ctx alone, not skipped when
// the output is stuck.
func (b *Bus) Flush(ctx context.Context) error {
	return b.waitWritten(ctx, b.tail.Load()&^closedBit, flushWait) // atomic, row tail: every record committed before now lies below
}

// Sync is Flush for a record that must be on disk before its caller goes on
// (SyncLevel): it writes and syncs everything committed before the call and
// reports failures since the previous Flush answer, but does not move that
// mark, so the next Flush or Close still reports them.
func (b *Bus) Sync(ctx context.Context) error {
	return b.waitWritten(ctx, b.tail.Load()&^closedBit, syncCall) // atomic, row tail
}

// SyncBounded is Sync for a log call: the one wait's rule with bound
// SyncWaitMax (see waitWritten); ErrWaitBound when it was skipped or
// reached the bound, the records still queued.
func (b *Bus) SyncBounded(ctx context.Context) error {
	return b.waitWritten(ctx, b.tail.Load()&^closedBit, syncWait) // atomic, row tail
}

// request hands req to the drainer and wakes it.
func (b *Bus) request(req flushReq) {
	b.mu.Lock()
	b.flushReqs = append(b.flushReqs, req)
	b.mu.Unlock()
	b.flushPending.Store(true) // atomic, row flushPending: seq-cst after the append: the drainer takes the list when it sees the flag
	b.kick()
}

// forget removes req once the books are final (stopped): the drainer has
// drained or counted everything up to the final tail, which is at least
// req's target, but it may have finished before taking req, which would
// then be kept forever.
func (b *Bus) forget(req flushReq) {
	b.mu.Lock()
	b.flushReqs = slices.DeleteFunc(b.flushReqs, func(r flushReq) bool { return r.ch == req.ch })
	b.mu.Unlock()
}

// Closed reports whether Close has been called.
func (b *Bus) Closed() bool {
	// An atomic load of tail: Close sets closedBit with an atomic Or before
	// it does anything else, so a call that follows Close sees it.
	return b.tail.Load()&closedBit != 0 // atomic, row tail
}

// Close stops accepting records (later Enqueue calls return ErrClosed and are
// counted), drains the ring, syncs the output and stops the drainer. It is
// idempotent and safe from several goroutines; every call waits for the same
// drain, and gets the same error: a *OutputError when any record failed in the
// bus's whole life (Failed is Stats.Failed, Err the last output error), even
// one an earlier Flush already reported, or when the final sync failed;
// nil when every record accepted was written. If ctx ends first, Close gives up (giveUp): before it returns
// ctx.Err(), every record not written is counted as failed, every waiting
// caller is answered, and no new call into the output starts.
func (b *Bus) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.tail.Or(closedBit) // atomic, row tail: from now on every reservation CAS fails
		b.broadcastSpace()   // parked Block producers re-check and see closed
		b.wakeLine()         // so do those in line behind them
		b.kick()
	})
	select {
	case <-b.done:
		return b.closed(ctx)
	case <-b.abort: // another Close gave up: its count ends at once
		<-b.stopped
		return b.closeErr
	case <-ctx.Done():
		b.giveUp(ctx.Err())
		return b.closeErr
	}
}

type pendingFlush struct {
	flushReq
	failedAt uint64
}

// answerWaiting answers every pending Flush, Sync and EnqueueWritten
// request while the batch that began at d.head is being retried. A request
// whose records are all below d.head (written before this batch) gets its
// usual answer (answerWritten). The others get err, marked as still
// retrying, with the failures since their mark; the "failures reported"
// mark does not move for them: if their records fail in the end, the next
// Flush and Close still report it.
func (d *drainer) answerWaiting(err error) {
	d.takeFlushes()
	d.answerWritten(d.head)
	failed := d.b.failed.Load() // atomic, row failed
	for _, r := range d.reqs {
		r.ch <- &OutputError{Op: "write", Output: d.b.output, Err: err, Failed: failed - r.failedAt, Retrying: true}
	}
	clear(d.reqs)
	d.reqs = d.reqs[:0]
}

func (d *drainer) takeFlushes() {
	b := d.b
	b.flushPending.Store(false) // atomic, row flushPending: before taking the list: a later append sets it again
	b.mu.Lock()
	reqs := b.flushReqs
	b.flushReqs = d.spareReqs[:0] // the list's two arrays alternate: appends allocate nothing
	b.mu.Unlock()
	for _, r := range reqs {
		d.reqs = append(d.reqs, pendingFlush{flushReq: r, failedAt: d.failedAnswered})
	}
	clear(reqs) // drop the channels
	d.spareReqs = reqs[:0]
}

// answerWritten answers every request whose target is at or below upTo
// (written), after one sync if any of them asks for it.
func (d *drainer) answerWritten(upTo uint64) {
	ready, needSync, mark := false, false, false
	for _, r := range d.reqs {
		if r.target <= upTo {
			ready, needSync, mark = true, needSync || r.sync, mark || r.mark
		}
	}
	if !ready {
		return
	}
	var syncErr error
	if needSync { // EnqueueWritten asks for the write only
		syncErr = d.sync()
	}
	failed := d.b.failed.Load() // atomic, row failed
	keep := d.reqs[:0]
	for _, r := range d.reqs {
		if r.target > upTo {
			keep = append(keep, r)
			continue
		}
		r.ch <- d.result(syncErr, failed-r.failedAt)
	}
	if mark {
		// Only a Flush answer moves the mark: a failure is then still
		// reported to the next Flush (and to Close) after EnqueueWritten
		// and Sync calls.
		d.failedAnswered = failed
	}
	clear(d.reqs[len(keep):])
	d.reqs = keep
}

// answerAll answers every request with the final books: failed is
// Stats.Failed, each request gets the failures since its mark.
func (d *drainer) answerAll(syncErr error, failed uint64) {
	for _, r := range d.reqs {
		r.ch <- d.result(syncErr, failed-r.failedAt) // buffered 1, answered once
	}
	d.reqs = nil
}

func (d *drainer) result(syncErr error, failed uint64) error {
	switch {
	case failed > 0:
		err := d.lastErr
		if err == nil {
			err = errAborted
		}
		return &OutputError{Op: "write", Output: d.b.output, Err: err, Failed: failed}
	case syncErr != nil:
		return &OutputError{Op: "sync", Output: d.b.output, Err: syncErr}
	}
	return nil
}

var errAborted = &abortError{}

type abortError struct{}

func (*abortError) Error() string { return "close deadline expired before the records were written" }

// finish runs once the ring is drained after Close.
func (d *drainer) finish() {
	b := d.b
	if n := b.takeGaps(math.MaxUint64, true); n > 0 {
		// Drops registered at the very end (a Drop racing with Close).
		d.addMarker(n)
		d.writeRound(d.batchAction(true, b.tail.Load())) // atomic, row tail
	}
	syncErr := d.sync()
	failed := b.failed.Load() // atomic, row failed
	d.answerAll(syncErr, failed)
	b.closeErr = d.result(syncErr, failed) // every failure of the bus's life: see Close
	d.b.timer.Stop()
	close(b.stopped) // after closeErr: waiters read it once they see stopped
}

// closed is Close's end once the drainer has exited: it waits until every
// report has reached OnError, unless Close was called from OnError.
func (b *Bus) closed(ctx context.Context) error {
	if reporter.InCallback() {
		return b.closeErr
	}
	select {
	case <-b.rep.Done():
		return b.closeErr
	case <-ctx.Done():
		return &ReportWaitError{Err: ctx.Err(), Close: b.closeErr}
	}
}

// ReportWaitError is Close's error when its context ended while OnError
// was still delivering reports: every record is written or counted, but a
// report may not have been delivered yet.
type ReportWaitError struct {
	Err   error // the context's error
	Close error // what Close would have returned: nil when every record was written
}

// Error implements error.
func (e *ReportWaitError) Error() string {
	s := fmt.Sprintf("asyncbus: close: OnError had not returned when Close's context ended (%v); reports may be undelivered", e.Err)
	if e.Close != nil {
		s += "; " + e.Close.Error()
	}
	return s
}

// Unwrap returns the context's error and Close's own, if any.
func (e *ReportWaitError) Unwrap() []error {
	if e.Close == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Close}
}
