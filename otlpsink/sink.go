package otlpsink

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// Stats are a Sink's delivery counters.
type Stats struct {
	Sent          uint64 // records in requests the collector accepted (Rejected included)
	Rejected      uint64 // records the collector reported as rejected in a partial success (also told to OnError, rate-limited)
	Requests      uint64 // HTTP requests made
	Retries       uint64 // requests repeated after a retryable failure
	FailedBatches uint64 // requests given up: permanent rejection, or retrying stopped by Close or the replay timeout (once per batch)
	FailedRecords uint64 // records refused, or left unsent when retrying stopped; each counted once
	Foreign       uint64 // records that were not encoded LogRecords (drop markers without Sequence), sent as text bodies
}

// Sink is an io.Writer with a WriteBatch method (the batch writer described
// in the asyncbus package documentation, "Writing an output") that sends
// records encoded by this package's handler to a collector. Use it through NewHandler or
// Sink.NewHandler; other records written to it (an asyncbus drop marker,
// or lines from a text handler) are each sent as a LogRecord whose body is
// their text.
type Sink struct {
	cfg *config

	resourcePrefix []byte // ResourceLogs.resource field, encoded once
	scopePrefix    []byte // ScopeLogs.scope field, encoded once

	// base is the context of every request; cancelled when the close
	// deadline passes, so a hung request cannot outlive Close.
	base   context.Context
	cancel context.CancelCauseFunc // the cause says why retrying stopped (gaveUpError)

	// giveUpAt is the unix-nano deadline after which retrying stops (0:
	// none). Atomic: set by Closing and NewHandler on other goroutines,
	// read by the drainer between attempts.
	giveUpAt atomic.Int64
	closing  chan struct{} // closed by Closing: wakes a back-off sleep to re-read giveUpAt
	// replaying is true while NewHandler replays a ring file (see
	// WriteBatch). Atomic: written by NewHandler, read by WriteBatch on
	// the goroutine that calls it (the replay, later the drainer).
	replaying atomic.Bool
	closeMu   sync.Once

	mu      sync.Mutex // serialises sends: the drainer, and Write by other users
	body    []byte
	zbuf    bytes.Buffer
	zw      *gzip.Writer
	foreign []byte
	// lastRejected identifies the batch last refused permanently, so the
	// bus's own retries of that batch are answered without re-sending it.
	// The memo lasts longer than the bus's retries of one batch can take
	// (memo, from the handler's WriteAttempts and WriteRetryMax), so a
	// refused batch is sent and counted once. It expires after that and is
	// cleared by any success, so a later batch at the same ring address
	// could only be mistaken for it if the whole ring wrapped within the
	// memo with every batch refused.
	lastRejected struct {
		first *byte
		size  int // len of the first record
		n     int
		at    time.Time
		err   error
	}
	memo time.Duration // how long lastRejected lasts: memoFor the handler's options (set in NewHandler)
	// ownHandler: the Sink serves its own handler (set in NewHandler, read
	// under mu), whose records are all framed LogRecords, so an unframed
	// record opening a batch is the bus's drop marker (see markerFailed).
	ownHandler bool

	// onError receives the retry reports (the handler's Options.OnError,
	// set in NewHandler; nil: standard error). Read under mu.
	onError func(error)
	// The current outage, for noteRetry's rate limit; under mu.
	outage struct {
		failures   uint64
		since      time.Time
		reportedAt time.Time
	}
	// partial is the collector's partial successes (rejected records) since
	// the last report to OnError, reported at most every reportEvery.
	partial struct {
		rejected, requests uint64
		msg                string // the collector's last error_message
		reportedAt         time.Time
	}
	reportEvery time.Duration                    // retryReportEvery; shorter in tests
	reports     sync.WaitGroup                   // report goroutines still running (before SetReport)
	busReport   atomic.Pointer[func(error) bool] // SetReport's function, nil before
	// pendingReports are reports made during the ring replay, before
	// SetReport (under mu).
	pendingReports []error

	// Counters: atomic because Stats reads them from any goroutine while
	// the drainer adds; each is independent, so no ordering is needed.
	sent, rejected, requests, retries, failedBatches, failedRecords, foreignN atomic.Uint64
	// unsettled is how many records of the batch in WriteBatch are not
	// counted yet (sent or failed). Once retrying has stopped, Stats
	// counts them as failed at once (settleGivenUp), so that the counts
	// are final when a Close that gave up returns; WriteBatch then counts
	// only what it takes from here (settle). Atomic: the CAS of settle and
	// the Swap of settleGivenUp decide, once, who counts each record.
	unsettled atomic.Int64
	// closeCtx is the context of the handler's Close (nil before): once it
	// is done, retrying has stopped. Atomic: stored by Closing, read by Stats.
	closeCtx atomic.Pointer[context.Context]
	// backlog counts the records queued in the handler's ring behind the
	// batch in WriteBatch (SetBacklog; nil without a handler). Atomic:
	// stored as the handler is made while its drainer goroutine runs.
	backlog atomic.Pointer[func() uint64]
}

var (
	_ io.Writer            = (*Sink)(nil)
	_ asyncbus.BatchWriter = (*Sink)(nil)
	_ asyncbus.Closer      = (*Sink)(nil)
	_ asyncbus.Reporter    = (*Sink)(nil)
	_ asyncbus.Backlogger  = (*Sink)(nil)
)

// NewSink resolves o against the environment and returns a Sink. It does
// not connect.
func NewSink(o Options) (*Sink, error) {
	c, err := resolve(o, os.Getenv)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, closing: make(chan struct{}), memo: rejectMemo, reportEvery: retryReportEvery}
	s.base, s.cancel = context.WithCancelCause(context.Background())

	res, m := openLen(nil, fRLResource)
	for _, a := range c.resource {
		res = appendAttr(res, fResAttributes, a, 1, nil)
	}
	s.resourcePrefix = closeLen(res, m)

	sc, m := openLen(nil, fSLScope)
	sc = appendString(sc, fScopeName, c.scopeName)
	if c.scopeVer != "" {
		sc = appendString(sc, fScopeVersion, c.scopeVer)
	}
	s.scopePrefix = closeLen(sc, m)
	return s, nil
}

// Stats returns the delivery counters. Once a Close has given up (its
// context is done, or its deadline or CloseTimeout passed), the records of
// the batch still in flight are counted in FailedBatches and FailedRecords,
// even if the collector answers the request later.
func (s *Sink) Stats() Stats {
	s.settleGivenUp()
	return Stats{
		Sent:          s.sent.Load(),
		Rejected:      s.rejected.Load(),
		Requests:      s.requests.Load(),
		Retries:       s.retries.Load(),
		FailedBatches: s.failedBatches.Load(),
		FailedRecords: s.failedRecords.Load(),
		Foreign:       s.foreignN.Load(),
	}
}

// Name is the collector's URL: it names the output in the handler's error
// reports.
func (s *Sink) Name() string { return s.cfg.url }

// Write sends p as one record.
func (s *Sink) Write(p []byte) (int, error) {
	if _, err := s.WriteBatch([][]byte{p}); err != nil {
		return 0, err
	}
	return len(p), nil
}
