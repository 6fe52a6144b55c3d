package bus

import (
	"sync"
	"sync/atomic"
)

// writeThroughState is the write-through in flight: the output's lock,
// the record handed to a BatchWriter, the error to report, the rest of a
// record the output took only part of, and the claim a Close that gives
// up meanwhile settles. Its words are in the package documentation's
// write-through table.
type writeThroughState struct {
	// wmu is held by the drainer while it calls the output (writes and
	// syncs) and tried (never waited for) by a producer that writes
	// through; the other fields are used only by the producer whose
	// reservation started at head == tail, and those producers are
	// serialized by that condition (see tryWriteThrough), so they need no
	// lock.
	wmu     sync.Mutex
	wtErr   atomic.Pointer[error] // the last write-through error the drainer has not reported yet
	wtOne   [][]byte              // len 1: the record handed to a BatchWriter
	wtCount atomic.Uint64         // Stats.WriteThrough
	// wtRest is 1 + the ring position where a write-through that the output
	// took only part of committed the rest of its record, 0 if none;
	// wtRestLen is how many bytes of that record are in the output. Stored
	// under wmu before the rest's header (release), loaded by the drainer
	// once per batch (acquire, after it saw that header): it tears the line
	// if the rest fails (see drainer.restIndex). Positions never repeat, so
	// a stale value never matches a later batch.
	wtRest    atomic.Uint64
	wtRestLen atomic.Uint64
	// owing is set by the drainer while it owes the output bytes that end a
	// torn record (drainer.owed): a write-through then leaves its record to
	// the ring, behind them. Stored before the drainer publishes head past
	// the torn batch, so a producer that finds the ring empty there sees it.
	owing atomic.Bool
	// wtStart (1 + position), wtEnd and wtClaim describe the write-through
	// in flight, for a Close that gives up meanwhile (see giveup.go): the
	// producer stores them under wmu before its call into the output, and
	// whichever of it and Close's final count moves wtClaim off wtWriting
	// first decides who counts the record.
	wtStart atomic.Uint64
	wtEnd   atomic.Uint64
	wtClaim atomic.Uint32
}

// wtAllow applies the write-through rate limit (a burst of
// WriteThroughBurst, then WriteThroughRate a second). Only a producer
// whose reservation found the ring empty calls it, holding wmu (see
// tryWriteThrough), so its CAS never contends.
func (b *callerGate) wtAllow() bool { return b.wtLimit.allow(b.nanotime()) }

// reportWriteThrough hands the error of a failed write-through to the
// drainer, which reports it through its own rate limit (one report per
// distinct error a second, shared with its own failures) when it next
// writes: the record's rest, committed to the ring, is then retried there.
//
// An *os.File's or a net.Conn's Write wraps the errno (in a *fs.PathError,
// a *net.OpError), while the drainer's writev reports the errno itself:
// the wrappers are taken off, so that one failure is one distinct error to
// the rate limit, and one report.
func (b *Bus) reportWriteThrough(err error) {
	if b.kind == outputWritev {
		err = bareErrno(err) // under *fs.PathError (files), *net.OpError (sockets), ...
	}
	if b.onError != nil {
		b.wtErr.Store(&err) // atomic, row wtErr: the drainer swaps it out; a later error replaces an unreported one
	}
}

type wtResult int

const (
	wtNotTried  wtResult = iota // the caller commits the record to the ring as usual
	wtWritten                   // written to the output, the reservation released
	wtCommitted                 // the output failed: what it did not take is committed at t
	wtCounted                   // a Close gave up meanwhile: the record is counted (Written or Failed), nothing committed
)

// wtClaim values (see Bus.wtClaim and giveup.go).
const (
	wtIdle      = 0
	wtWriting   = 1 // a write-through is in flight at [wtStart-1, wtEnd)
	wtAbandoned = 2 // Close's final count skipped it: its producer counts it
)

// tryWriteThrough writes p, reserved at [t, t+need) while head == t, straight
// to the output, if the rate limit allows it (or force).
//
// Why the order of the output is the ring's order: head == t or wtHead == t
// at the reservation means every entry below t is in the output (head is
// published only after the output's write call returned, wtHead after ours).
// Entries reserved after ours are not: the drainer stops at our header,
// which stays zero until we publish wtHead past it (the drainer then
// adopts it, see drainer.adoptHead). So nothing
// else can be written between the last consumed record and ours except a
// drop marker or a sync by the drainer, which hold wmu; TryLock fails then,
// and the record takes the ring. A pending gap at or below t keeps the
// record in the ring too, behind its marker.
//
// Why at most one producer is here at a time (and may use wtOne):
// the next producer to find head or wtHead == tail at its reservation does
// so only after one of them passed our reservation, which happens after we
// stored wtHead or the drainer consumed our committed entry.
func (b *Bus) tryWriteThrough(p []byte, t, need uint64, in callerInputs) wtResult {
	if callerActionFor(in) != callerWriteThrough || !b.wmu.TryLock() {
		return wtNotTried
	}
	defer b.wmu.Unlock()
	if !b.mayWriteThrough(t, len(p), in) {
		return wtNotTried
	}
	// Published before the abort check (seq-cst): a Close giving up either
	// sees the claim, or we see its abort (giveup.go).
	b.wtEnd.Store(t + need)    // atomic, row wtEnd
	b.wtStart.Store(t + 1)     // atomic, row wtStart
	b.wtClaim.Store(wtWriting) // atomic, row wtClaim
	if b.aborted.Load() {      // atomic, row aborted
		if b.wtClaim.CompareAndSwap(wtWriting, wtIdle) { // atomic, row wtClaim
			return wtNotTried // committed to the ring, where Close's count finds it
		}
		b.failed.Add(1) // atomic, row failed: Close's count skipped our reservation
		return wtCounted
	}
	raw := p
	var kept seqKept
	if b.seq.on() { // issue 39 (seq.go): the record takes its number with the ring's order
		p = b.seq.numberKeeping(p, &kept)
	}
	n, err := b.writeOne(p)
	if n == 0 && b.seq.on() {
		// Nothing went out: the record goes to the ring as it came (its
		// headroom is rewritten there) and gets this number back.
		p = b.seq.unnumber(raw, &kept)
	}
	if !b.wtClaim.CompareAndSwap(wtWriting, wtIdle) { // atomic, row wtClaim
		// Close gave up during the call and left this record to us.
		if n == len(p) {
			b.written.Add(1)              // atomic, row written
			b.writtenBytes.Add(uint64(n)) // atomic, row writtenBytes
		} else {
			b.failed.Add(1) // atomic, row failed
		}
		return wtCounted
	}
	// Atomic adds: these counters are otherwise the drainer's, which may
	// add to them at the same time (a marker round), and Stats reads them.
	b.writeCalls.Add(1) // atomic, row writeCalls
	if n < len(p) || (err != nil && n == 0) {
		if err != nil {
			b.reportWriteThrough(err)
		}
		b.commitRest(p, n, t, need)
		return wtCommitted
	}
	b.written.Add(1)              // atomic, row written
	b.writtenBytes.Add(uint64(n)) // atomic, row writtenBytes
	b.wtCount.Add(1)              // atomic, row wtCount
	b.releaseWrittenThrough(t, need)
	return wtWritten
}

// mayWriteThrough reports whether the record of n bytes reserved at t may
// be written through now (wmu held): it asks the caller policy with the
// output's health, then checks the permits that cost a system call (a
// pipe's room) or spend a token (the rate limit), in that order, so that
// a record that takes the ring anyway does not spend a write-through's
// token.
func (b *Bus) mayWriteThrough(t uint64, n int, in callerInputs) bool {
	// A pending gap at or below t: its marker goes first. (A gap registered
	// after this load belongs to a record refused concurrently with ours:
	// its marker after our record is in order; a marker at or below t is
	// held behind a rest committed here, see drainer.collect.)
	if b.gapPos.Load() <= t || // atomic, row gapPos: a drop registers its gap with a store under dropMu
		b.owing.Load() { // atomic, row owing: the drainer writes the owed bytes before our record
		in.facts |= factOrderAhead
	}
	in.speed = uint8(b.outputSpeed()) // the breaker (callerGate)
	if !b.quiet() {
		in.facts |= factBusy
	}
	if callerActionFor(in) != callerWriteThrough {
		return false
	}
	return b.direct(n) && (in.has(factWritten) || b.wtAllow())
}

// writeOne makes the write-through's one call into the output and returns
// how many bytes of p it took.
func (b *Bus) writeOne(p []byte) (n int, err error) {
	start := b.beginCall()
	defer b.endCall(start)
	if b.kind == outputBatch {
		b.wtOne[0] = p
		k, err := outputWriteBatch(b.w.(BatchWriter), b.wtOne)
		b.wtOne[0] = nil
		if k >= 1 {
			return len(p), err
		}
		return 0, err // the output cut back to the last whole record, nothing of p
	}
	n, err = outputWrite(b.w, p)
	return max(0, min(n, len(p))), err
}

// commitRest commits what the output did not take of p (its first n bytes
// went out) at the reservation [t, t+need), for the drainer to write with
// its retries and error reports. Committed under wmu, so no marker can
// land inside a torn line. The rest is shorter than the reservation:
// padding fills the gap (committed first, so the drainer never waits at a
// zero word).
func (b *Bus) commitRest(p []byte, n int, t, need uint64) {
	off, used := b.offsetOf(t), align8(hdrSize+uint64(len(p)-n))
	if used < need {
		atomic.StoreUint64(b.hdr(off+ringOff(used)), flagCommit|flagPadding|(need-used)) // atomic, row header word
	}
	if n > 0 {
		// Before the commit (release): the drainer must know that the
		// record's first n bytes are out, to end the line if the rest fails.
		b.wtRestLen.Store(uint64(n)) // atomic, row wtRestLen
		b.wtRest.Store(t + 1)        // atomic, row wtRest
	}
	b.commit(off, p[n:])
}

// releaseWrittenThrough publishes the written-through reservation [t,
// t+need) as consumed and wakes the drainer if it waits for it.
func (b *Bus) releaseWrittenThrough(t, need uint64) {
	// Release store after the counters: a Stats that sees the new wtHead
	// sees the record as written. Our header at t was never written, so the
	// space is still zero when the drainer adopts it as released.
	b.wtHead.Store(t + need) // atomic, row wtHead
	// Producers that reserved after us and committed before our wtHead store
	// saw head and wtHead below their reservation and did not check the
	// drainer (see wakeAfterCommit); if there are any (tail moved), we do.
	// A drainer in stWaitWT waits for this very write-through: we wake it
	// whatever tail says. The drainer parks after storing its state and
	// loading wtHead (hasWork, waitUncommitted): either it sees our store,
	// or our state load below (seq-cst, after it) sees its state.
	switch s := b.state.Load(); s { // atomic, row state
	case stRunning:
	case stWaitWT:
		b.wake(s, 0)
	default:
		if next := b.tail.Load() &^ closedBit; next > t+need { // atomic, row tail
			b.wake(s, next-(t+need))
		}
	}
}
