// Package reporter runs a bus's OnError callback on a goroutine of its
// own, one report at a time, through a bounded queue that never blocks
// its senders (the drainer, an output's own reports).
package reporter

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// Queue is how many reports may wait for a slow OnError. The
// drainer's reports are rate-limited per situation, so the queue fills
// only when OnError blocks (logging through a full Block-mode ring, say).
const Queue = 64

// Reporter runs OnError on its own goroutine, so that a callback that logs
// through the same bus, or calls Flush or Close, cannot make the drainer
// wait for itself. The drainer hands it reports through a bounded queue and
// never blocks: when the queue is full the report is counted in lost, and
// the count is delivered as a report of its own.
type Reporter struct {
	onError func(error)
	// queue takes the reports: the drainer's, and an output's (Bus.Report).
	// mu orders every send before the close in stop, and stopped refuses
	// sends after it (an output used on after its handler closed).
	queue   chan error
	mu      sync.Mutex
	stopped bool
	done    chan struct{} // closed when every queued report has been delivered
	lost    atomic.Uint64 // reports refused by a full queue, not yet told to OnError
}

func (r *Reporter) Init(onError func(error)) {
	r.onError = onError
	r.done = make(chan struct{})
	if onError == nil {
		close(r.done)
		return
	}
	r.queue = make(chan error, Queue)
	go r.loop()
}

// Send queues err without blocking. It reports false once the reporter
// has stopped or before it started (the report is then not taken); a full
// queue counts the report as lost and still returns true.
func (r *Reporter) Send(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.done == nil {
		return false
	}
	select {
	case r.queue <- err:
	default:
		r.lost.Add(1) // atomic, row lost: the reporter goroutine swaps it
	}
	return true
}

// Stop closes the queue (the drainer when it exits, or a Close that gave
// up during the drainer's call into the output; the second call does nothing): the reporter
// delivers what is queued and exits; later sends are refused.
func (r *Reporter) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return // a Close that gave up stopped it first
	}
	r.stopped = true
	if r.queue != nil {
		close(r.queue)
	}
}

func (r *Reporter) loop() {
	defer close(r.done)
	for err := range r.queue {
		if late, ok := err.(*lateReport); ok {
			r.deliver(late)
		} else {
			r.call(err)
		}
		r.tellLost() // after err: the lost reports came after it
	}
}

// deliver passes a late report to OnError and tells its sender.
func (r *Reporter) deliver(late *lateReport) {
	r.call(late.err)
	close(late.delivered)
}

func (r *Reporter) tellLost() {
	// Swap: every lost report is told exactly once, even with send racing.
	if n := r.lost.Swap(0); n > 0 { // atomic, row lost
		r.call(fmt.Errorf("asyncbus: %s lost: OnError was too slow to take them", plural.Count(n, "error report", "error reports")))
	}
}

// call runs the callback. A panic in it must not kill the reporter (later
// reports, and Close waiting for them, depend on it).
func (r *Reporter) call(err error) {
	defer func() { _ = recover() }()
	r.onError(err)
}

// reporterCall is the function name inCallback looks for on the stack.
const reporterCall = "github.com/asyncbus/asyncbus/internal/reporter.(*Reporter).call"

// InCallback reports whether the calling goroutine is running an OnError
// callback (of any bus): Close called from OnError must not wait for the
// reporter, which is waiting for it. Only Close pays for this stack walk.
// It walks the whole stack, however deep the callback called Close.
func InCallback() bool { return onStack(reporterCall) }

// Done is closed once every queued report has been delivered, after Stop;
// nil before Init.
func (r *Reporter) Done() <-chan struct{} { return r.done }

// lateReport is a report whose sender waits until OnError has returned.
type lateReport struct {
	err       error
	delivered chan struct{} // closed once OnError has returned
}

func (l *lateReport) Error() string { return l.err.Error() }

// Late passes err to OnError before it returns, after every report
// before it, also once the reporter has stopped (a record logged after
// Close), so that a program that ends right after the call still has it:
// through the queue while the reporter runs, else on a goroutine of its
// own once the reporter has delivered its last report, so OnError is
// never called twice at once. It waits at most wait (the report is then
// delivered later), and not at all from inside OnError, whose reporter
// would be waiting for it.
func (r *Reporter) Late(err error, wait time.Duration) {
	if r.onError == nil {
		return
	}
	late := &lateReport{err: err, delivered: make(chan struct{})}
	if !r.Send(late) {
		go func() {
			if r.done != nil { // nil only before Init; then nothing runs OnError
				<-r.done
			}
			r.deliver(late)
		}()
	}
	if InCallback() {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-late.delivered:
	case <-t.C:
	}
}

// onStack reports whether one of the functions named is on the calling
// goroutine's stack, however deep.
func onStack(names ...string) bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // maybe truncated: grow until the whole stack fits
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if slices.Contains(names, f.Function) {
			return true
		}
		if !more {
			return false
		}
	}
}
