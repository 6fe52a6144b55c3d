package bus

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// Enqueue copies p into the ring (it never retains p) and returns nil, or
// ErrDropped (ring full in Drop mode, or Block timeout expired) or ErrClosed.
// In Block mode without timeout it waits for space. With
// Config.WriteThrough, a record that finds the ring empty may be written to
// the output before Enqueue returns (see tryWriteThrough), and one that finds a
// short queue ahead of it may wait until the drainer has written it (the
// quiet wait, see Config.WriteThrough); Enqueue's result is the same
// either way.
func (b *Bus) Enqueue(p []byte) error { return b.EnqueueUntil(p, nil) }

// EnqueueWritten is Enqueue for records that must reach the output before the
// call returns (the root handler's Error level): the record is written
// through when the ring is empty (whatever the rate), and otherwise
// EnqueueWritten waits until the drainer has written it. It does not sync
// the output (Flush does). Besides Enqueue's errors it returns a *OutputError
// when records failed since the previous Flush answer, a Retrying one as
// Flush does, and after Close the result of the final drain.
func (b *Bus) EnqueueWritten(p []byte) error {
	return b.EnqueueWrittenCtx(context.Background(), p)
}

// EnqueueUntil is Enqueue whose Block-mode wait for room ends when done is
// closed: the record is then dropped and counted, as at a BlockTimeout
// (ErrDropped). A closed done never makes a record wait for room. With a
// done channel the record is never written through nor waited for quietly:
// a write on the caller's goroutine could not be interrupted.
func (b *Bus) EnqueueUntil(p []byte, done <-chan struct{}) error {
	end, wrote, ahead, err := b.enqueue(p, false, done)
	if err != nil || wrote {
		return err
	}
	if !b.mayAct(ahead) {
		return nil // the busy path
	}
	switch b.callerAction(b.queuedInputs(0, done, ahead), uint64(len(p))) {
	case callerWaitWritten:
		b.waitOversize(end)
	case callerWaitQuiet:
		if b.quietAllow() {
			// The record was accepted: what the drainer answers (failures
			// since the last Flush) is not this call's result. Its failure,
			// if any, is counted and reported by OnError, Flush and Close as
			// for any record.
			b.waitWritten(context.Background(), end, b.quietWaitFor(), false)
		}
	}
	return nil
}

// queuedInputs describes to the caller policy a record committed behind
// ahead bytes (MaxUint64: an oversize record), with the facts of its call.
func (b *Bus) queuedInputs(call callerFact, done <-chan struct{}, ahead uint64) callerInputs {
	if done != nil {
		call |= factCancellable
	}
	if ahead == math.MaxUint64 {
		call |= factOversize
	}
	return callerInputs{facts: b.facts | call, queue: queueBehind, ahead: ahead}
}

// EnqueueWrittenCtx is EnqueueWritten bounded by ctx: when ctx ends, a wait
// for room drops the record (ErrDropped), and a wait for its write returns
// ctx.Err() with the record queued, to be written as usual. If ctx can end
// (a non-nil Done), the record is never written through: the drainer
// writes it and the caller waits for that, which ctx can interrupt.
//
// The wait lasts at most ErrorWaitMax and is made only when it can
// succeed: it is skipped when the output, at the rate the drainer measured,
// cannot write the bytes queued ahead of the record and the record itself
// within ErrorWaitMax (a backlog), while the output is stuck (a call into
// it has taken longer), or when the caller is itself inside a call into
// the output (an output logging through its handler); and it ends early
// once the bytes still ahead of the record, at the rate measured since,
// cannot be written in the time left. The record then stays queued and
// the result is nil.
func (b *Bus) EnqueueWrittenCtx(ctx context.Context, p []byte) error {
	end, wrote, ahead, err := b.enqueue(p, true, ctx.Done())
	if err != nil || wrote {
		return err
	}
	if b.callerAction(b.queuedInputs(factWritten, ctx.Done(), ahead), uint64(len(p))) != callerWaitWritten {
		return nil // stuck, backlogged or reentrant: waiting would only hold the caller
	}
	return b.waitWritten(ctx, end, ErrorWaitMax, true) // pooled: an Error record allocates nothing either
}

// enqueue reserves, copies and commits p, or writes it through (force:
// whenever the ring is empty, regardless of the rate limit). It returns the
// end of the record's reservation, whether it was written through, and how
// many bytes of unconsumed entries were ahead of it at its reservation
// (MaxUint64 for an oversize record, which never waits quietly).
func (b *Bus) enqueue(p []byte, force bool, done <-chan struct{}) (end uint64, wrote bool, ahead uint64, err error) {
	if len(p) > b.maxRecord {
		return b.enqueueOversize(p, done)
	}
	n := uint64(len(p))
	need := align8(hdrSize + n)
	w := waitState{done: done}
	for {
		// Head before tail: both only grow and head <= tail at every moment,
		// so h <= t. Read the other way round, a producer paused between the
		// loads could see a head already past its tail, making t+total-h
		// wrap and a ring with room look full.
		h := b.head.Load()    // atomic acquire, row head: the space below h is consumed and zeroed
		wh := b.wtHead.Load() // atomic, row wtHead: atomic acquire, before tail too: wh <= t
		t := b.tail.Load()    // atomic, row tail: may observe closedBit set by Close
		if t&closedBit != 0 {
			b.leaveLine(&w)
			return 0, false, 0, b.dropClosed()
		}
		if w.me != nil || b.lineLen.Load() != 0 { // atomic, row lineLen: producers in line for room (see awaitTurn)
			if again, err := b.awaitTurn(&w, t); err != nil {
				return 0, false, 0, err
			} else if again {
				continue
			}
		}
		off := b.offsetOf(t)
		total := need
		if room := b.capacity - uint64(off); need > room {
			total = room + need // padding to the end of the region, record at offset 0
		}
		if t+total-h > b.capacity {
			if err := b.waitForRoom(&w, t, h, -1); err != nil {
				b.leaveLine(&w)
				return 0, false, 0, err
			}
			continue
		}
		// The one contended write: a CAS, because the padding decision depends on t.
		if !b.tail.CompareAndSwap(t, t+total) { // atomic, row tail
			continue
		}
		if w.me != nil {
			b.leaveLine(&w) // the next in line may reserve while we copy
		}
		if (h == t || wh == t) && total == need && b.writeThrough {
			// The ring was empty when we reserved (see tryWriteThrough).
			switch b.tryWriteThrough(p, t, need, b.emptyInputs(force, done)) {
			case wtWritten, wtCounted:
				return t + need, true, 0, nil
			case wtCommitted:
				b.wakeAfterCommit(t, t+need, need)
				return t + need, false, 0, nil
			}
		}
		if total != need {
			// Commit the padding at once (release): the drainer skips it; our own
			// record then starts at offset 0.
			atomic.StoreUint64(b.hdr(off), flagCommit|flagPadding|(b.capacity-uint64(off))) // atomic, row header word
			off = 0
		}
		b.commit(off, p)
		b.wakeAfterCommit(t, t+total, t+total-h)     // t+total-h: the depth, an upper bound (head may have moved on)
		return t + total, false, t - max(h, wh), nil // h, wh <= t (loaded before tail)
	}
}

// emptyInputs describes to the caller policy a record whose reservation
// found the ring empty.
func (b *Bus) emptyInputs(written bool, done <-chan struct{}) callerInputs {
	in := callerInputs{facts: b.facts, queue: queueEmpty}
	if written {
		in.facts |= factWritten
	}
	if done != nil {
		in.facts |= factCancellable
	}
	return in
}

// commit copies rec into the entry at ring offset off and publishes it.
func (b *Bus) commit(off ringOff, rec []byte) {
	n := uint64(len(rec))
	copy(b.mem[off+hdrSize:off+hdrSize+ringOff(n)], rec)
	word := flagCommit | n
	if b.file != nil {
		// Durable queue: the checksum rides in the spare bits of the same
		// word, so the commit is still one atomic store (see ringfile.go);
		// with numbers, not over the headroom the drainer writes (ringseq.go).
		word |= durableSum(rec, b.seq.on()) << sumShift
	}
	// Release store: the payload written above happens-before the drainer's
	// atomic load that observes flagCommit.
	atomic.StoreUint64(b.hdr(off), word) // atomic, row header word
}

// wakeAfterCommit wakes the drainer if it may be waiting for the record
// whose reservation [t, end) was just committed, and applies back-pressure
// past the high watermark.
//
// The state word is loaded only when the drainer may be idle because of this
// record: when it has consumed everything before it (head or wtHead >= t;
// head can be past t only by the wrap padding at the start of our own
// reservation), or past the high watermark. Otherwise an earlier record is still unconsumed,
// and the drainer is either running or will be woken by that record's
// producer, which runs this same check after its commit.
//
// Lost-wake-up argument (sync/atomic is sequentially consistent): the
// drainer stores head, then stState parked, then loads the header at its read
// position (park, hasWork); we store the header, then load head, then state.
// If the drainer's header load misses our store, it precedes our head load,
// which therefore sees the drainer's last head (>= t, as the drainer waits at
// our record), and our state load, later still, sees stParked. When the
// drainer waits at a written-through reservation instead, see tryWriteThrough.
func (b *Bus) wakeAfterCommit(t, end, depth uint64) {
	if depth >= b.hwBytes || b.head.Load() >= t || b.wtHead.Load() >= t { // atomic, rows head, wtHead
		if s := b.state.Load(); s != stRunning { // atomic, row state
			b.wake(s, depth)
		}
	}
	if depth >= b.hwBytes && (t^(end-1))>>b.yieldShift != 0 {
		// Back-pressure before the ring is full: when producers outnumber
		// cores, the drainer may be waiting behind them for a processor.
		// Only the producer whose reservation crosses a 2^b.yieldShift-byte
		// boundary yields, not every one (docs/design.md, Batching).
		runtime.Gosched()
	}
}

// enqueueOversize puts p in the heap side table and commits an 8-byte
// reference entry in the ring, so oversize records keep their ring order.
// Oversize records are never written through.
func (b *Bus) enqueueOversize(p []byte, done <-chan struct{}) (uint64, bool, uint64, error) {
	sz := int64(len(p))
	w := waitState{done: done}
	for {
		h := b.head.Load() // atomic, row head: before tail, as in Enqueue, so that h <= t
		t := b.tail.Load() // atomic, row tail
		if t&closedBit != 0 {
			b.leaveLine(&w)
			return 0, false, math.MaxUint64, b.dropClosed()
		}
		if w.me != nil || b.lineLen.Load() != 0 { // atomic, row lineLen: as in enqueue
			if again, err := b.awaitTurn(&w, t); err != nil {
				return 0, false, math.MaxUint64, err
			} else if again {
				continue
			}
		}
		// Outstanding oversize bytes are bounded by capacity; one record is
		// always admitted when none is outstanding, so any size makes progress.
		ob := b.oversizeBytes.Load() // atomic, row oversizeBytes
		if t+hdrSize-h > b.capacity || (ob > 0 && ob+sz > int64(b.capacity)) {
			if err := b.waitForRoom(&w, t, h, ob); err != nil {
				b.leaveLine(&w)
				return 0, false, math.MaxUint64, err
			}
			continue
		}
		// An 8-byte entry never needs padding: offsets are multiples of 8.
		if !b.tail.CompareAndSwap(t, t+hdrSize) { // atomic, row tail
			continue
		}
		b.leaveLine(&w)
		b.oversizeBytes.Add(sz) // atomic, row oversizeBytes
		b.oversize.Add(1)       // atomic, row oversize
		cp := append([]byte(nil), p...)
		b.mu.Lock()
		b.side[t] = cp
		b.mu.Unlock()
		off := b.offsetOf(t)
		// Release store after the map insert (mutex) so the drainer finds the entry.
		// The length bits carry the record's length (lenMask if larger), which
		// only ring-file recovery reads: the drainer ignores them.
		atomic.StoreUint64(b.hdr(off), flagCommit|flagOversize|min(uint64(len(p)), lenMask)) // atomic, row header word
		b.wakeAfterCommit(t, t+hdrSize, t+hdrSize-h)
		return t + hdrSize, false, math.MaxUint64, nil
	}
}

func (b *Bus) dropClosed() error {
	b.dropped.Add(1)       // atomic, row dropped
	b.droppedClosed.Add(1) // atomic, row droppedClosed
	return ErrClosed
}

// wake wakes the drainer if it is parked, or if it is sleeping and the queue
// depth has crossed the high watermark. The CAS makes exactly one producer
// send the token; the channel has room for it, so the send never blocks.
func (b *Bus) wake(s uint32, depth uint64) {
	if s == stSleeping && depth < b.hwBytes {
		return // a bounded sleep ends within MaxLatency/2 anyway
	}
	b.idleStrategy.wake(s)
}

// kick wakes the drainer whether it is parked or sleeping (Flush, Close, full
// ring). A running drainer needs no token: the caller has published its reason
// (flushPending, closedBit, a committed record) before loading state, and the
// drainer re-checks those after storing stParked (see park).
func (b *Bus) kick() {
	if s := b.state.Load(); s != stRunning { // atomic, row state: a running drainer re-checks the reasons
		b.idleStrategy.wake(s)
	}
}

type waitState struct {
	spins    int
	deadline time.Time
	done     <-chan struct{} // EnqueueUntil, EnqueueWrittenCtx: closed, the wait ends in a drop; nil: never
	me       *roomWaiter     // this producer's place in the line for room; nil: not in it
	front    bool            // me is the line's front: it may reserve
	bypass   bool            // an output logging through its own handler: never in line
}

// maxYieldShift: past the high watermark, producers yield once per
// 2^Bus.yieldShift ring bytes reserved, see wakeAfterCommit: 32 KiB (~150
// records of 200 bytes), or an eighth of a smaller ring, so that a small
// ring still yields several times between the watermark and full.
const maxYieldShift = 15

const (
	spinLimit  = 32 // re-checks before yielding
	yieldLimit = 64 // then runtime.Gosched until this many, then park
)

// waitForRoom handles a ring that had no room at tail t and head h (or, with ob >= 0,
// an oversize budget that held ob bytes): it drops (Drop mode, or Block after
// its timeout) or waits for the drainer to free space: in line (roomline.go),
// where only the front spins and parks. A nil return means "try again".
func (b *Bus) waitForRoom(w *waitState, t, h uint64, ob int64) error {
	in := callerInputs{facts: b.facts, queue: queueFull}
	if chanClosed(w.done) {
		in.facts |= factCancelled
	}
	if w.bypass {
		in.facts |= factReentrant
	}
	if callerActionFor(in) == callerDrop {
		b.kick()
		return b.drop(t)
	}
	if w.spins == 0 {
		b.kick() // a full ring is past any watermark: make sure the drainer runs
		if b.blockTimeout > 0 && w.deadline.IsZero() {
			w.deadline = time.Now().Add(b.blockTimeout)
		}
	}
	if w.me == nil && !w.bypass {
		if b.inOutputCall() {
			in.facts |= factReentrant
		}
		if callerActionFor(in) == callerWaitRoom {
			b.joinLine(w) // first in line, or behind those who came first
			return nil
		}
		w.bypass = true // callerSpinRoom
	}
	w.spins++
	switch {
	case w.spins < spinLimit:
		return nil
	case w.spins < yieldLimit:
		runtime.Gosched()
		return nil
	}
	if b.blockTimeout > 0 && !time.Now().Before(w.deadline) {
		return b.drop(t)
	}
	if w.bypass {
		// callerSpinRoom, spun out: an output logging through its own
		// handler while the ring is full, whose room is freed only after
		// its own call returns.
		return b.drop(t)
	}
	// Park. Lost-wake-up argument (all operations sequentially consistent):
	// we increment waiters, then re-check tail/head; the drainer stores head,
	// then loads waiters. Either our re-check sees the new head, or the
	// drainer's load sees waiters > 0 and closes the channel we took before
	// the re-check.
	b.waiters.Add(1)        // atomic, row waiters
	defer b.waiters.Add(-1) // atomic, row waiters
	b.mu.Lock()
	ch := b.spaceCh
	b.mu.Unlock()
	if b.tail.Load() != t || b.head.Load() != h || (ob >= 0 && b.oversizeBytes.Load() != ob) { // atomic, rows tail, head, oversizeBytes
		return nil // something moved: retry at once (the caller recomputes)
	}
	var timeout <-chan time.Time
	if b.blockTimeout > 0 {
		tm := time.NewTimer(time.Until(w.deadline))
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-ch:
	case <-timeout:
	case <-w.done: // the next call drops
	}
	return nil
}

// broadcastSpace wakes every parked Block producer (called by the drainer
// after freeing space when waiters > 0, and by Close).
func (b *Bus) broadcastSpace() {
	b.mu.Lock()
	close(b.spaceCh)
	b.spaceCh = make(chan struct{})
	b.mu.Unlock()
}
