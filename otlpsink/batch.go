package otlpsink

import (
	"bytes"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
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
		attempts = asyncbus.DefaultWriteAttempts
	}
	if retryMax <= 0 {
		retryMax = asyncbus.DefaultWriteRetryMax
	}
	span := time.Duration(attempts) * retryMax // every back-off is at most retryMax
	if span/time.Duration(attempts) != retryMax || span > 24*time.Hour {
		return 24 * time.Hour // overflow or absurd budgets: a day is long enough
	}
	return max(rejectMemo, span+time.Second)
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
	s.unsettled.Store(int64(len(recs))) // the last batch's are all settled: WriteBatch counts every record
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

// fail counts one request's n records as failed, unless settleGivenUp
// already counted them.
func (s *Sink) fail(n int) {
	if s.settle(n) {
		s.failedBatches.Add(1)
		s.failedRecords.Add(uint64(n))
	}
}

// settle takes k records off the unsettled ones of the batch in hand, to
// be counted by the caller; it reports false when settleGivenUp has
// counted them already.
func (s *Sink) settle(k int) bool {
	for {
		cur := s.unsettled.Load()
		if cur < int64(k) {
			return false
		}
		if s.unsettled.CompareAndSwap(cur, cur-int64(k)) {
			return true
		}
	}
}

// settleGivenUp counts the unsettled records of the batch in hand as one
// failed batch once retrying has stopped (retryStopped): the records a
// Close that gave up could not deliver.
func (s *Sink) settleGivenUp() {
	if !s.retryStopped() {
		return
	}
	if n := s.unsettled.Swap(0); n > 0 {
		s.failedBatches.Add(1)
		s.failedRecords.Add(uint64(n))
	}
}

// retryStopped reports whether no further attempt will be made: the
// handler's Close context is done, or the give-up deadline has passed.
func (s *Sink) retryStopped() bool {
	if ctx := s.closeCtx.Load(); ctx != nil && (*ctx).Err() != nil {
		return true
	}
	g := s.giveUpAt.Load()
	return g != 0 && time.Now().UnixNano() >= g
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
		f, own := ownFrame(r)
		rs := len(f)
		if !own {
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
		if f, own := ownFrame(r); own {
			b = append(b, f...)
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
