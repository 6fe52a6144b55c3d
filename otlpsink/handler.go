// The Sink's handler: NewHandler, which replays an earlier process's ring
// file before it returns, and the hooks the handler calls as it closes.

package otlpsink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asyncbus/asyncbus"
)

// NewHandler returns an asyncbus handler that encodes records as OTLP
// LogRecords and ships them to the collector described by o. opts are the
// handler's options as for asyncbus.NewHandler; Format, Color and
// TraceFatalNames do not apply, AddSource writes the OTel code.* attributes,
// a Named handler's name is a top-level attribute under LoggerKey,
// Features.Sequence writes the attributes asyncbus.seq and asyncbus.run
// (see the package documentation), and ReplaceAttr and FlightRecorder are
// refused (not supported).
//
// Records at or above opts.SyncLevel (FATAL by default) are delivered
// before Handle returns, as for any asyncbus handler: while the collector
// is unreachable, such a Handle waits for it (with RingFile the record is
// already safe in the file). Like asyncbus.Open it
// fails when opts.Ring.File cannot be used, or when the records an earlier
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
	s.memo = memoFor(o.Retry.Attempts, o.Retry.MaxBackoff)
	s.onError = o.OnError
	s.ownHandler = true
	s.lastRejected.err = nil // a new ring: nothing of an earlier one is retried
	s.mu.Unlock()
	// The replay runs inside asyncbus.OpenWithEncoder, before the drainer
	// starts; the drainer gets records only once h is returned, after the
	// Store below, so it never sees the flag set.
	s.replaying.Store(true)
	h, err := asyncbus.OpenWithEncoder(s, newEncoder(o.AddSource, o.Encoding.LoggerKey), opts) // calls SetReport and SetBacklog after the replay
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

// Closing implements asyncbus.Closer, called when the handler's Close
// begins: retrying stops at ctx's deadline, or after Options.CloseTimeout
// if ctx has none, and when ctx is cancelled. It returns that deadline, which the
// handler's Close waits for when its context has none.
func (s *Sink) Closing(ctx context.Context) time.Time {
	s.closeMu.Do(func() {
		d, ok := ctx.Deadline()
		if !ok {
			d = time.Now().Add(s.cfg.closeWait)
		}
		s.closeCtx.Store(&ctx)
		s.giveUpAt.Store(d.UnixNano())
		time.AfterFunc(time.Until(d), func() { s.cancel(errCloseDeadline) })
		context.AfterFunc(ctx, func() { s.cancel(fmt.Errorf("the handler's Close context ended: %w", ctx.Err())) })
		close(s.closing)
	})
	s.closeIdle()
	return time.Unix(0, s.giveUpAt.Load()) // the first call's deadline: Close is idempotent
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
