package bus

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// OutputError reports a failure of the output. It is passed to Config.OnError and
// returned by Flush and Close.
type OutputError struct {
	Op         string // "write" or "sync"
	Output     string // the output's name (see outputName)
	Err        error  // the output's error
	Failed     uint64 // records given up on (counted in Stats.Failed) because of this situation, for Flush/Close
	Suppressed uint64 // OnError only: similar errors not reported since the last report
	Retrying   bool   // Flush, Sync, EnqueueWritten: answered while the records are still retried (Config.WriteAttempts)
}

// ErrRetrying is matched (errors.Is) by a *OutputError answered to Flush,
// Sync or EnqueueWritten while the records it waited for are still being
// retried (Config.WriteAttempts above the default).
var ErrRetrying = errors.New("the records stay queued and are retried")

// Is reports whether target is ErrRetrying and e was answered while
// retrying.
func (e *OutputError) Is(target error) bool { return e.Retrying && target == ErrRetrying }

// Error implements error.
func (e *OutputError) Error() string {
	msg := e.Err.Error()
	if pe, ok := e.Err.(*fs.PathError); ok && pe.Path == e.Output {
		msg = pe.Err.Error() // "write /dev/full: ..." would repeat op and output
	}
	s := "asyncbus: " + e.Op + " " + e.Output + ": " + msg
	if e.Failed > 0 {
		s += " (" + plural.Count(e.Failed, "record", "records") + " failed)"
	}
	if e.Suppressed > 0 {
		s += " (" + plural.Count(e.Suppressed, "similar error", "similar errors") + " suppressed)"
	}
	if e.Retrying {
		s += " (the records stay queued and are retried)"
	}
	return s
}

// Unwrap returns the output's error.
func (e *OutputError) Unwrap() error { return e.Err }

type limitState struct {
	last       time.Time
	suppressed uint64
}

// Report passes err to OnError through the bus's reporter: the goroutine
// that delivers the bus's own reports, one at a time, and that Close waits
// for. It is for an output's own reports (retries, partial successes); a full
// queue counts the report as lost, as for the bus's own. It returns false,
// taking nothing, before the drainer has started (a ring file's replay)
// and once the bus has closed (the output used on by itself): the caller then
// delivers the report itself.
func (b *Bus) Report(err error) bool { return b.rep.send(err) }

// LateReportWaitMax bounds ReportLate's wait for OnError.
const LateReportWaitMax = time.Second

// ReportLate passes err to OnError before it returns, after every report
// before it, also once the bus has closed (a record logged after Close),
// so that a program that ends right after the call still has it: through
// the reporter while it runs, else on a goroutine of its own once the
// reporter has delivered its last report, so OnError is never called twice
// at once. It waits at most LateReportWaitMax (the report is then
// delivered later), and not at all from inside OnError, whose reporter
// would be waiting for it.
func (b *Bus) ReportLate(err error) {
	if b.onError == nil {
		return
	}
	late := &lateReport{err: err, delivered: make(chan struct{})}
	if !b.rep.send(late) {
		go func() {
			if b.rep.done != nil { // nil only before the drainer started; then nothing runs OnError
				<-b.rep.done
			}
			b.rep.deliver(late)
		}()
	}
	if inCallback() {
		return
	}
	t := time.NewTimer(LateReportWaitMax)
	defer t.Stop()
	select {
	case <-late.delivered:
	case <-t.C:
	}
}

// lateReport is a report whose sender waits until OnError has returned.
type lateReport struct {
	err       error
	delivered chan struct{} // closed once OnError has returned
}

func (l *lateReport) Error() string { return l.err.Error() }

// report passes err to OnError at most about once a second per distinct
// situation (operation and error text), carrying the count of suppressed
// repeats. It never blocks: the callback runs on the reporter goroutine.
func (d *drainer) report(op string, err error) {
	b := d.b
	if b.onError == nil {
		return
	}
	key := op + "\x00" + err.Error()
	now := d.now()
	e := d.limiter[key]
	if e == nil {
		if len(d.limiter) >= 64 {
			clear(d.limiter) // bounded memory for ever-changing error texts
		}
		e = &limitState{}
		d.limiter[key] = e
	} else if now.Sub(e.last) < time.Second {
		e.suppressed++
		return
	}
	e.last = now
	s := e.suppressed
	e.suppressed = 0
	b.rep.send(&OutputError{Op: op, Output: b.output, Err: err, Suppressed: s})
}

// reportQueue is how many reports may wait for a slow OnError. The
// drainer's reports are rate-limited per situation, so the queue fills
// only when OnError blocks (logging through a full Block-mode ring, say).
const reportQueue = 64

// reporter runs OnError on its own goroutine, so that a callback that logs
// through the same bus, or calls Flush or Close, cannot make the drainer
// wait for itself. The drainer hands it reports through a bounded queue and
// never blocks: when the queue is full the report is counted in lost, and
// the count is delivered as a report of its own.
type reporter struct {
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

func (r *reporter) init(onError func(error)) {
	r.onError = onError
	r.done = make(chan struct{})
	if onError == nil {
		close(r.done)
		return
	}
	r.queue = make(chan error, reportQueue)
	go r.loop()
}

// send queues err without blocking. It reports false once the reporter
// has stopped or before it started (the report is then not taken); a full
// queue counts the report as lost and still returns true.
func (r *reporter) send(err error) bool {
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

// stop closes the queue (the drainer when it exits, or a Close that gave
// up during the drainer's call into the output; the second call does nothing): the reporter
// delivers what is queued and exits; later sends are refused.
func (r *reporter) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return // a Close that gave up stopped it first (giveup.go)
	}
	r.stopped = true
	if r.queue != nil {
		close(r.queue)
	}
}

func (r *reporter) loop() {
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
func (r *reporter) deliver(late *lateReport) {
	r.call(late.err)
	close(late.delivered)
}

func (r *reporter) tellLost() {
	// Swap: every lost report is told exactly once, even with send racing.
	if n := r.lost.Swap(0); n > 0 { // atomic, row lost
		r.call(fmt.Errorf("asyncbus: %s lost: OnError was too slow to take them", plural.Count(n, "error report", "error reports")))
	}
}

// call runs the callback. A panic in it must not kill the reporter (later
// reports, and Close waiting for them, depend on it).
func (r *reporter) call(err error) {
	defer func() { _ = recover() }()
	r.onError(err)
}

// reporterCall is the function name inCallback looks for on the stack.
const reporterCall = "github.com/asyncbus/asyncbus/internal/bus.(*reporter).call"

// inCallback reports whether the calling goroutine is running an OnError
// callback (of any bus): Close called from OnError must not wait for the
// reporter, which is waiting for it. Only Close pays for this stack walk.
// It walks the whole stack, however deep the callback called Close.
func inCallback() bool { return onStack(reporterCall) }
