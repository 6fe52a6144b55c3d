// Package otlpsink ships asyncbus records to an OpenTelemetry Collector (or
// any OTLP receiver) over OTLP/HTTP protobuf.
//
// Records are encoded on the caller, without allocating, as OTLP LogRecords
// already framed as elements of ScopeLogs.log_records, and enqueued on the
// handler's lock-free ring; the drainer's batch is then just their
// concatenation, which the Sink wraps in one ExportLogsServiceRequest with
// the precomputed resource and scope and POSTs to <endpoint>/v1/logs.
//
// Delivery: a batch is acknowledged to the ring only once the collector
// accepted it. Retryable failures (429, 502, 503, 504, network errors) are
// retried with capped, jittered exponential back-off, honouring Retry-After
// (at most a minute, or RetryMax if longer); meanwhile records wait in the
// ring, the handler's Overflow policy decides what callers see, and the
// handler's OnError is told at the first failure of an outage, then at most
// once a minute with a count. Permanent rejections (400 and other 4xx/5xx)
// and TLS verification failures are not retried: they are counted as
// failed, in the handler's Stats and in Sink.Stats, and reported. When a
// drained batch is split into several requests (MaxRequestBytes) and one is
// refused, the others are still sent, and the handler's Written and Failed
// counts are the records the collector accepted and refused (a refused
// drop marker is counted in Sink.Stats.FailedRecords and reported, but in
// the handler's DropMarkers, not its Failed). With
// asyncbus.Options.RingFile, records accepted before a crash or during an
// outage are sent by the next start (at least once: a batch in flight at the
// crash is sent again). A permanent refusal during that replay stops it:
// NewHandler fails with the refusal, nothing after the refused request is
// sent, and the ring file keeps the replayed batch for the next start
// (which sends again the records accepted before the refusal).
package otlpsink

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/bus"
	"github.com/asyncbus/asyncbus/internal/core"
)

// rejectMemo is how long a permanently refused batch is remembered (see
// Sink.lastRejected) at least: longer than the bus's own retries of one
// batch take with its default budget (4 attempts, back-off at most 1 s).
// A handler with a raised budget remembers it for longer (memoFor).
const rejectMemo = 5 * time.Second

// memoFor is how long to remember a refused batch for a handler whose
// options allow attempts write attempts per batch with back-offs of at
// most retryMax (zero: the defaults): longer than those retries can take.
func memoFor(attempts int, retryMax time.Duration) time.Duration {
	if attempts <= 0 {
		attempts = bus.DefaultWriteAttempts
	}
	if retryMax <= 0 {
		retryMax = bus.DefaultRetryMax
	}
	span := time.Duration(attempts) * retryMax // every back-off is at most retryMax
	if span/time.Duration(attempts) != retryMax || span > 24*time.Hour {
		return 24 * time.Hour // overflow or absurd budgets: a day is long enough
	}
	return max(rejectMemo, span+time.Second)
}

// Stats are a Sink's delivery counters.
type Stats struct {
	Sent          uint64 // records in requests the collector accepted (Rejected included)
	Rejected      uint64 // records the collector reported as rejected in a partial success (also told to OnError, rate-limited)
	Requests      uint64 // HTTP requests made
	Retries       uint64 // requests repeated after a retryable failure
	FailedBatches uint64 // requests given up: permanent rejection, or retrying stopped by Close or the replay timeout (once per batch)
	FailedRecords uint64 // records refused, or left unsent when retrying stopped; each counted once
	Foreign       uint64 // records that were not encoded LogRecords (drop markers), sent as text bodies
}

// StatusError is a non-2xx answer from the collector.
type StatusError struct {
	// Code is the HTTP status code of the response.
	Code int
	// Body is the start of the response body.
	Body      string
	Permanent bool // not retried: the batch is counted as failed
}

// Error implements error.
func (e *StatusError) Error() string {
	kind := "retryable"
	if e.Permanent {
		kind = "permanent"
	}
	return fmt.Sprintf("otlpsink: collector answered %d (%s): %s", e.Code, kind, e.Body)
}

// permanentError is a failure to send that no retry can cure: the
// collector's certificate fails verification, the endpoint does not speak
// TLS, or the request cannot be built. The batch is counted as failed.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return "otlpsink: not retried: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// isPermanent reports whether err ends the sending of its batch for good.
func isPermanent(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Permanent
	}
	var pe *permanentError
	return errors.As(err, &pe)
}

// isTLSConfigError reports whether err, from http.Client.Do, is a TLS
// verification or protocol mismatch: a configuration problem, which the
// OTel SDK does not retry either (it retries only temporary errors).
func isTLSConfigError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// retryingError is the report of a collector that keeps failing while the
// Sink retries (see Sink.noteRetry).
type retryingError struct {
	err      error
	failures uint64 // failed attempts since the outage began
	since    time.Time
}

func (e *retryingError) Error() string {
	return fmt.Sprintf("otlpsink: retrying, %d failed attempts since %s: %v",
		e.failures, e.since.Format(time.RFC3339), e.err)
}
func (e *retryingError) Unwrap() error { return e.err }

// retryReportEvery is how often a continuing outage is reported again.
const retryReportEvery = time.Minute

// gaveUpError wraps the last error when retrying stops (Close or replay deadline).
type gaveUpError struct{ err error }

func (e *gaveUpError) Error() string { return "otlpsink: gave up retrying: " + e.err.Error() }
func (e *gaveUpError) Unwrap() error { return e.err }

// Sink is an io.Writer and async.BatchWriter that sends records encoded by
// this package's handler to a collector. Use it through NewHandler or
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
	cancel context.CancelFunc

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
}

var (
	_ io.Writer   = (*Sink)(nil)
	_ core.Closer = (*Sink)(nil)
)

// NewSink resolves o against the environment and returns a Sink. It does
// not connect.
func NewSink(o Options) (*Sink, error) {
	c, err := resolve(o, os.Getenv)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, closing: make(chan struct{}), memo: rejectMemo, reportEvery: retryReportEvery}
	s.base, s.cancel = context.WithCancel(context.Background())

	res, m := openLen(nil, fRLResource)
	for _, a := range c.resource {
		res = appendAttr(res, fResAttributes, a)
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

// NewHandler returns an asyncbus handler that encodes records as OTLP
// LogRecords and ships them to the collector described by o. opts are the
// handler's options as for asyncbus.NewHandler; Format, Color and
// SlogLevelNames do not apply, AddSource writes the OTel code.* attributes,
// a Named handler's name is a top-level attribute under LoggerKey, and
// ReplaceAttr is refused (not supported).
//
// Records at or above opts.SyncLevel (FATAL by default) are delivered
// before Handle returns, as for any asyncbus handler: while the collector
// is unreachable, such a Handle waits for it (with RingFile the record is
// already safe in the file). Like asyncbus.Open it
// fails when opts.RingFile cannot be used, or when the records an earlier
// process left there cannot be delivered within o.ReplayTimeout.
func NewHandler(o Options, opts *asyncbus.Options) (*asyncbus.Handler, error) {
	s, err := NewSink(o)
	if err != nil {
		return nil, err
	}
	return s.NewHandler(opts)
}

// NewHandler returns an asyncbus handler writing to s (see the package
// function NewHandler). Use one handler per Sink.
func (s *Sink) NewHandler(opts *asyncbus.Options) (*asyncbus.Handler, error) {
	if opts != nil && opts.ReplaceAttr != nil {
		return nil, errors.New("otlpsink: asyncbus.Options.ReplaceAttr is not supported")
	}
	// Bound the retries of the ring file replay that runs inside.
	replayDeadline := time.Now().Add(s.cfg.replayWait).UnixNano()
	s.giveUpAt.Store(replayDeadline)
	var o asyncbus.Options
	if opts != nil {
		o = *opts
	}
	s.mu.Lock() // WriteBatch reads memo and onError under mu
	s.memo = memoFor(o.WriteAttempts, o.WriteRetryMax)
	s.onError = o.OnError
	s.ownHandler = true
	s.lastRejected.err = nil // a new ring: nothing of an earlier one is retried
	s.mu.Unlock()
	// The replay runs inside asyncbus.Open, before the drainer starts;
	// the drainer gets records only once h is returned, after the Store
	// below, so it never sees the flag set.
	s.replaying.Store(true)
	h, err := asyncbus.Open(s, opts)
	if err == nil {
		// Before h is shared: the records' encoder, Closing and SetReport.
		err = core.Install(h, newEncoder(o.AddSource, o.LoggerKey))
	}
	s.replaying.Store(false)
	// Replay is over: retry without limit until Close. CAS, not Store: a
	// Close that already began keeps its own deadline.
	s.giveUpAt.CompareAndSwap(replayDeadline, 0)
	if err != nil {
		// No handler, so no SetReport: the replay's reports go out alone.
		s.mu.Lock()
		pending := s.pendingReports
		s.pendingReports = nil
		s.mu.Unlock()
		for _, r := range pending {
			s.reportAlone(r)
		}
		return nil, err
	}
	return h, nil
}

// Closing implements the hook the handler calls when its Close begins:
// retrying stops at ctx's deadline, or after Options.CloseTimeout if ctx
// has none, and when ctx is cancelled.
func (s *Sink) Closing(ctx context.Context) {
	s.closeMu.Do(func() {
		d, ok := ctx.Deadline()
		if !ok {
			d = time.Now().Add(s.cfg.closeWait)
		}
		s.giveUpAt.Store(d.UnixNano())
		time.AfterFunc(time.Until(d), s.cancel)
		context.AfterFunc(ctx, s.cancel)
		close(s.closing)
	})
	s.closeIdle()
}

// closeIdle closes the idle keep-alive connections of the transport the
// Sink made (not those of an Options.HTTPClient) once Close has begun, so
// that none of its goroutines outlives the handler. Requests made later
// (the final flush) open a connection again, closed by the same call at
// the end of their WriteBatch.
func (s *Sink) closeIdle() {
	if s.cfg.ownTransport == nil {
		return
	}
	select {
	case <-s.closing:
		// The body of every response was read to EOF before post
		// returned, and net/http puts the connection back in the idle
		// pool before such a read returns: it is closed here.
		s.cfg.ownTransport.CloseIdleConnections()
	default:
	}
}

// Stats returns the delivery counters.
func (s *Sink) Stats() Stats {
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

// Write sends p as one record.
func (s *Sink) Write(p []byte) (int, error) {
	if _, err := s.WriteBatch([][]byte{p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteBatch sends the leading records of recs that fit in one request,
// retrying until the collector accepts them, and returns how many it sent.
//
// A permanent refusal of that request does not end the batch: the rest of
// recs is sent too (the bus would otherwise count it as failed unsent),
// and WriteBatch returns len(recs) minus the records that failed, with the
// refusal's error. The bus then counts that many records as written and the
// others (its retries of the tail are answered from lastRejected) as
// failed: the handler's Written and Failed counts are those the collector
// accepted and refused, though not which records of the batch they were.
// A drop marker opening recs (the bus puts one only there) whose request
// is refused is left out of that failed count, so that it shifts no user
// record's count: the handler counts it in DropMarkers like a delivered
// one, while Stats.FailedRecords and the error, which reaches OnError,
// say it was refused.
// While a ring file is replayed (inside NewHandler) a permanent refusal
// ends the batch instead, with nothing more sent: the replay then fails,
// NewHandler with it, and the ring file keeps the batch for the next start.
// When retrying stops at the close or replay deadline, every record of recs
// counts as failed, once, and the error says so.
func (s *Sink) WriteBatch(recs [][]byte) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.closeIdle()
	if lr := &s.lastRejected; lr.err != nil && len(recs[0]) > 0 && &recs[0][0] == lr.first &&
		len(recs[0]) == lr.size && len(recs) >= lr.n && time.Since(lr.at) < s.memo {
		// The bus retrying the records we answered for good: same answer.
		return 0, lr.err
	}
	n := s.build(recs)
	err := s.deliver(n)
	if err == nil {
		s.lastRejected.err = nil
		return n, nil
	}
	if !isPermanent(err) { // retrying stopped: nothing of recs will be sent
		s.fail(len(recs))
		s.remember(recs, err)
		return 0, err
	}
	s.fail(n)
	if s.replaying.Load() {
		// Replaying a ring file: the bus stops at this error and keeps the
		// whole replayed batch in the file for the next start, so records
		// sent after the refusal would be accepted twice. Stop here.
		return 0, err
	}
	failed := n
	for i := n; i < len(recs); {
		k := s.build(recs[i:])
		switch e := s.deliver(k); {
		case e == nil:
		case isPermanent(e):
			s.fail(k)
			failed += k
		default:
			k = len(recs) - i
			s.fail(k)
			failed += k
		}
		i += k
	}
	if s.ownHandler && !isFramed(recs[0]) {
		// recs opens with a drop marker (see ownHandler), in the refused
		// first request. The bus counts by position: the views below
		// written as written (a marker there as a drop marker), the others
		// as failed. A marker only ever opens a batch, so leaving it out of
		// the failed count makes the user records' counts exact; the
		// refused marker is in Stats.FailedRecords and the error reaches
		// OnError.
		failed--
	}
	written := len(recs) - failed
	if written == len(recs) {
		s.lastRejected.err = nil // nothing left for the bus to retry
	} else {
		s.remember(recs[written:], err)
	}
	return written, err
}

// fail counts one request's n records as failed.
func (s *Sink) fail(n int) {
	s.failedBatches.Add(1)
	s.failedRecords.Add(uint64(n))
}

// remember notes recs, the records the bus will retry after err, so that
// those retries are answered with err without sending or counting again.
func (s *Sink) remember(recs [][]byte, err error) {
	if len(recs) == 0 || len(recs[0]) == 0 {
		return
	}
	lr := &s.lastRejected
	lr.first, lr.size, lr.n = &recs[0][0], len(recs[0]), len(recs)
	lr.at, lr.err = time.Now(), err
}

// build writes the request for the leading records of recs into s.body
// and returns how many it holds.
func (s *Sink) build(recs [][]byte) int {
	n, size := 0, len(s.scopePrefix)
	for _, r := range recs {
		rs := len(r)
		if !isFramed(r) {
			rs = len(s.wrapForeign(r))
		}
		if n > 0 && size+rs > s.cfg.maxRequest {
			break
		}
		size += rs
		n++
	}
	scopeLogs := size
	rl := len(s.resourcePrefix) + protowire.SizeTag(fRLScopeLogs) + protowire.SizeBytes(scopeLogs)

	b := s.body[:0]
	b = protowire.AppendTag(b, fReqResourceLogs, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(rl))
	b = append(b, s.resourcePrefix...)
	b = protowire.AppendTag(b, fRLScopeLogs, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(scopeLogs))
	b = append(b, s.scopePrefix...)
	for _, r := range recs[:n] {
		if isFramed(r) {
			b = append(b, r...)
		} else {
			s.foreignN.Add(1)
			b = append(b, s.wrapForeign(r)...)
		}
	}
	s.body = b
	return n
}

// isFramed reports whether r is exactly one ScopeLogs.log_records element,
// as the encoder writes them.
func isFramed(r []byte) bool {
	if len(r) < 2 || r[0] != recordTag {
		return false
	}
	v, n := protowire.ConsumeVarint(r[1:])
	return n > 0 && uint64(len(r)-1-n) == v
}

// wrapForeign encodes a record that is not a LogRecord (e.g. the handler's
// drop marker) as a WARN LogRecord with its text as the body, in s.foreign.
func (s *Sink) wrapForeign(r []byte) []byte {
	r = bytes.TrimRight(r, "\n")
	b, m := openLen(s.foreign[:0], fSLLogRecords)
	b = protowire.AppendTag(b, fLRObserved, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, uint64(time.Now().UnixNano()))
	b = protowire.AppendTag(b, fLRSeverity, protowire.VarintType)
	b = protowire.AppendVarint(b, 13)
	b = appendString(b, fLRSeverityText, "WARN")
	b, mb := openLen(b, fLRBody)
	b = appendBytesString(b, fAVString, r) // valid UTF-8, as every string field
	b = closeLen(b, mb)
	s.foreign = closeLen(b, m)
	return s.foreign
}

// deliver posts s.body, which holds n records, until it is accepted,
// permanently refused, or the give-up deadline passes.
func (s *Sink) deliver(n int) error {
	payload := s.body
	if s.cfg.gzip {
		s.zbuf.Reset()
		if s.zw == nil {
			s.zw, _ = gzip.NewWriterLevel(&s.zbuf, gzip.BestSpeed)
		} else {
			s.zw.Reset(&s.zbuf)
		}
		_, _ = s.zw.Write(payload) // writes to a bytes.Buffer cannot fail
		_ = s.zw.Close()
		payload = s.zbuf.Bytes()
	}
	for attempt := 0; ; attempt++ {
		wait, err := s.post(payload, n)
		if err == nil {
			s.outage.failures = 0
			return nil
		}
		if isPermanent(err) {
			return err
		}
		s.noteRetry(err)
		if wait <= 0 {
			wait = s.backoff(attempt)
		}
		if !s.sleep(wait) {
			return &gaveUpError{err}
		}
		s.retries.Add(1)
	}
}

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
	err := fmt.Errorf("otlpsink: the collector rejected %d records in %d accepted requests (counted in Stats.Rejected): %s", p.rejected, p.requests, p.msg)
	if p.msg == "" {
		err = fmt.Errorf("otlpsink: the collector rejected %d records in %d accepted requests (counted in Stats.Rejected)", p.rejected, p.requests)
	}
	p.rejected, p.requests, p.msg = 0, 0, ""
	s.report(err)
}

// SetReport implements core.Reporter: the handler's bus delivers the
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

// backoff is the jittered exponential delay before retry attempt+1:
// uniformly in [d/2, d] for d = RetryInitial·2^attempt capped at RetryMax.
func (s *Sink) backoff(attempt int) time.Duration {
	d := s.cfg.retryMax
	if attempt < 30 {
		d = min(s.cfg.retryInit<<attempt, s.cfg.retryMax)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d, or less when the give-up deadline comes first; it reports
// false once the deadline has passed (nothing more should be tried).
func (s *Sink) sleep(d time.Duration) bool {
	until := time.Now().Add(d)
	for {
		now := time.Now()
		if g := s.giveUpAt.Load(); g != 0 {
			if now.UnixNano() >= g || s.base.Err() != nil {
				return false
			}
			if dl := time.Unix(0, g); dl.Before(until) {
				until = dl // woken at the deadline, the check above ends it
			}
		}
		if !now.Before(until) {
			return true
		}
		t := time.NewTimer(until.Sub(now))
		select {
		case <-t.C:
		case <-s.base.Done():
			t.Stop()
			return false
		case <-s.closingWake():
			t.Stop() // Close began: loop to apply its deadline
		}
	}
}

// closingWake returns the closing channel while no deadline is set, and
// nil (never ready) once one is, so a closed channel cannot spin the loop.
func (s *Sink) closingWake() <-chan struct{} {
	if s.giveUpAt.Load() != 0 {
		return nil
	}
	return s.closing
}

// post makes one request. For a retryable failure it returns the delay the
// collector asked for with Retry-After (0 if none).
func (s *Sink) post(payload []byte, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(s.base, s.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.url, bytes.NewReader(payload))
	if err != nil {
		return 0, &permanentError{err}
	}
	for k, v := range s.cfg.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	s.requests.Add(1)
	resp, err := s.cfg.client.Do(req)
	if err != nil {
		if isTLSConfigError(err) {
			return 0, &permanentError{err}
		}
		return 0, err // network error: retryable
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		s.sent.Add(uint64(n))
		if rej, msg := partialSuccess(body); rej > 0 {
			s.rejected.Add(rej)
			s.notePartial(rej, msg)
		}
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After"), max(retryAfterCap, s.cfg.retryMax)), &StatusError{Code: resp.StatusCode, Body: short(body)}
	}
	return 0, &StatusError{Code: resp.StatusCode, Body: short(body), Permanent: true}
}

func short(b []byte) string {
	if len(b) > 256 {
		b = b[:256]
	}
	return string(b)
}

// retryAfterCap bounds the wait a Retry-After header asks for (at least
// RetryMax): the OTel Go SDK gives up on a batch rather than wait past its
// MaxElapsedTime (1 minute by default); this Sink never gives up, so it
// waits at most that long and asks again.
const retryAfterCap = time.Minute

// retryAfter parses a Retry-After value, seconds or an HTTP date, as a
// wait of at most limit (0 if absent, unparsable or in the past).
func retryAfter(v string, limit time.Duration) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs > uint64(limit/time.Second) { // also ErrRange's max value: no overflow below
			return limit
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), limit)
	}
	return 0
}

// partialSuccess reads ExportLogsServiceResponse.partial_success from a
// protobuf response body: rejected_log_records (0 if absent) and
// error_message ("" if absent; cut to 256 bytes and made valid UTF-8). What
// was read before a malformed part is kept, and each field's last value
// wins, as a protobuf decoder merges repeated fields.
func partialSuccess(b []byte) (rejected uint64, msg string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return rejected, msg
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return rejected, msg
			}
		fields:
			for len(ps) > 0 {
				pnum, ptyp, m := protowire.ConsumeTag(ps)
				if m < 0 {
					break
				}
				ps = ps[m:]
				switch {
				case pnum == 1 && ptyp == protowire.VarintType:
					v, k := protowire.ConsumeVarint(ps)
					if k < 0 {
						break fields
					}
					rejected = v // proto3 scalar: the last value wins, also across merged partial_success fields
					ps = ps[k:]
					continue
				case pnum == 2 && ptyp == protowire.BytesType:
					v, k := protowire.ConsumeBytes(ps)
					if k < 0 {
						break fields
					}
					msg = strings.ToValidUTF8(short(v), "\uFFFD")
					ps = ps[k:]
					continue
				}
				k := protowire.ConsumeFieldValue(pnum, ptyp, ps)
				if k < 0 {
					break
				}
				ps = ps[k:]
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return rejected, msg
		}
		b = b[n:]
	}
	return rejected, msg
}
