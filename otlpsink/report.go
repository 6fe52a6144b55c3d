package otlpsink

import (
	"fmt"
	"os"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// retryingError is the report of a collector that keeps failing while the
// Sink retries (see Sink.noteRetry).
type retryingError struct {
	err      error
	failures uint64 // failed attempts since the outage began
	since    time.Time
}

func (e *retryingError) Error() string {
	return fmt.Sprintf("otlpsink: retrying, %s since %s: %v",
		plural.Count(e.failures, "failed attempt", "failed attempts"), e.since.Format(time.RFC3339), e.err)
}

func (e *retryingError) Unwrap() error { return e.err }

// recoveredReport says that the collector accepts records again after an
// outage (see Sink.noteRecovered).
type recoveredReport struct {
	failures uint64        // failed attempts during the outage
	lasted   time.Duration // from the first failure to the first success
	waited   uint64        // records waiting for the collector when it came back
}

func (e *recoveredReport) Error() string {
	return fmt.Sprintf("otlpsink: the collector accepts records again after %s over %s; %s waited",
		plural.Count(e.failures, "failed attempt", "failed attempts"), e.lasted.Round(time.Millisecond), plural.Count(e.waited, "record", "records"))
}

// retryReportEvery is how often a continuing outage is reported again.
const retryReportEvery = time.Minute

// noteRetry counts a retryable failure and reports it to onError: the
// first of an outage at once, then at most once per reportEvery with the
// count so far. The report runs on a goroutine of its own, as the bus's
// do: onError may log through the handler whose drainer is waiting here.
func (s *Sink) noteRetry(err error) {
	o := &s.outage
	now := time.Now()
	if o.failures == 0 {
		o.since, o.reportedAt = now, time.Time{}
	}
	o.failures++
	if !o.reportedAt.IsZero() && now.Sub(o.reportedAt) < s.reportEvery {
		return
	}
	o.reportedAt = now
	s.report(&retryingError{err: err, failures: o.failures, since: o.since})
}

// noteRecovered ends the current outage, if any, with one report: how
// long it lasted and how many records waited for the collector: the
// request of n records that got through, the rest of the batch in hand,
// and the records queued behind it in the handler's ring (none without a
// handler).
func (s *Sink) noteRecovered(n int) {
	o := &s.outage
	if o.failures == 0 {
		return
	}
	waited := uint64(n) + uint64(max(s.unsettled.Load(), 0))
	if b := s.backlog.Load(); b != nil { // atomic: see Sink.backlog
		waited += (*b)() // on the drainer, in WriteBatch, as Backlog requires
	}
	s.report(&recoveredReport{failures: o.failures, lasted: time.Since(o.since), waited: waited})
	o.failures = 0
}

// notePartial records a partial success (the collector accepted the
// request but rejected rej of its records, saying msg) and tells OnError
// at the first one, then at most every reportEvery with the counts since.
// Only the drainer calls it (through WriteBatch), so s.partial needs no lock.
func (s *Sink) notePartial(rej uint64, msg string) {
	p := &s.partial
	p.rejected += rej
	p.requests++
	if msg != "" {
		p.msg = msg
	}
	now := time.Now()
	if !p.reportedAt.IsZero() && now.Sub(p.reportedAt) < s.reportEvery {
		return
	}
	p.reportedAt = now
	err := fmt.Errorf("otlpsink: the collector rejected %s in %s (counted in Stats.Rejected): %s", plural.Count(p.rejected, "record", "records"), plural.Count(p.requests, "accepted request", "accepted requests"), p.msg)
	if p.msg == "" {
		err = fmt.Errorf("otlpsink: the collector rejected %s in %s (counted in Stats.Rejected)", plural.Count(p.rejected, "record", "records"), plural.Count(p.requests, "accepted request", "accepted requests"))
	}
	p.rejected, p.requests, p.msg = 0, 0, ""
	s.report(err)
}

// SetBacklog implements asyncbus.Backlogger: backlog counts the records queued
// behind the batch in WriteBatch, for the recovery report.
func (s *Sink) SetBacklog(backlog func() uint64) { s.backlog.Store(&backlog) }

// SetReport implements asyncbus.Reporter: the handler's bus delivers the
// Sink's reports from then on, one at a time with its own, and its Close
// waits for them.
// Reports made during the ring replay, before the handler existed, were
// kept (see report) and are handed over now, in order.
func (s *Sink) SetReport(report func(error) bool) {
	s.mu.Lock()
	pending := s.pendingReports
	s.pendingReports = nil
	s.busReport.Store(&report)
	s.mu.Unlock()
	for _, r := range pending {
		if !report(r) {
			s.reportAlone(r)
		}
	}
}

// report passes report to OnError through the handler's reporter (see
// SetReport); before the handler is made (a ring file's replay), or for a
// Sink used without one, on a goroutine of its own (OnError may log
// through the handler whose drainer is in this sink's WriteBatch), to
// standard error if there is no OnError.
//
// Its callers hold s.mu.
func (s *Sink) report(report error) {
	if r := s.busReport.Load(); r != nil { // atomic: set by the handler while its drainer may already write
		if (*r)(report) {
			return
		}
	} else if s.replaying.Load() {
		// The handler is being made: its reporter takes the report in
		// SetReport, so that Close waits for it too.
		s.pendingReports = append(s.pendingReports, report)
		return
	}
	s.reportAlone(report)
}

// reportAlone delivers report on a goroutine of its own (OnError may log
// through the handler whose drainer is in this sink's WriteBatch), to
// standard error if there is no OnError: for a Sink used without a
// handler, or after its handler closed.
func (s *Sink) reportAlone(report error) {
	onError := s.onError
	s.reports.Go(func() {
		defer func() { _ = recover() }() // a panicking OnError must not crash the program
		if onError == nil {
			fmt.Fprintln(os.Stderr, report)
			return
		}
		onError(report)
	})
}
