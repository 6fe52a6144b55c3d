package bus

import (
	"errors"
	"io/fs"
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
func (b *Bus) Report(err error) bool { return b.rep.Send(err) }

// LateReportWaitMax bounds ReportLate's wait for OnError.
const LateReportWaitMax = time.Second

// ReportLate passes err to OnError before it returns, after every report
// before it, also once the bus has closed (a record logged after Close),
// waiting at most LateReportWaitMax (see reporter.Late).
func (b *Bus) ReportLate(err error) { b.rep.Late(err, LateReportWaitMax) }

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
	b.rep.Send(&OutputError{Op: op, Output: b.output, Err: err, Suppressed: s})
}
