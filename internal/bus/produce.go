package bus

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Enqueue copies p into the ring (it never retains p) and returns nil, or
// ErrDropped (ring full in Drop mode, or a Block wait for room that gave
// up: BlockTimeout, or a stuck output) or ErrClosed. In Block mode it
// waits for room while the output makes progress. A record committed
// behind a short queue (a quiet program) may wait for its write, at most
// MaxLatency (the quiet wait; Config.QuietWait); Enqueue's result is the
// same either way.
func (b *Bus) Enqueue(p []byte) error { return b.enqueueUntil(context.Background(), nil, p) }

// EnqueueWritten is Enqueue for records that must reach the output before the
// call returns (the root handler's Error level): it waits until the drainer
// has written the record, within ErrorWaitMax, unless the wait cannot
// succeed (see waitWritten). It does not sync the output (Flush does).
// Besides Enqueue's errors it returns a *OutputError when records failed
// since the previous Flush answer, a Retrying one as Flush does, and after
// Close the result of the final drain.
func (b *Bus) EnqueueWritten(p []byte) error {
	return b.EnqueueWrittenCtx(context.Background(), p)
}

// EnqueueUntil is Enqueue whose waits end when ctx ends: a wait for room
// then drops the record and counts it, as at a BlockTimeout (ErrDropped);
// a quiet wait leaves the record queued. An ended ctx never makes a record
// wait for room.
func (b *Bus) EnqueueUntil(ctx context.Context, p []byte) error {
	return b.enqueueUntil(ctx, ctx.Done(), p)
}

// enqueueUntil is EnqueueUntil with done, ctx's Done channel: Enqueue
// passes nil, which spares the hot path a call through the interface.
func (b *Bus) enqueueUntil(ctx context.Context, done <-chan struct{}, p []byte) error {
	end, ahead, err := b.enqueue(p, done)
	if err != nil {
		return err
	}
	switch {
	case len(p) > b.maxRecord: // oversize: never a quiet wait
		if b.file != nil && b.overflow == Block && done == nil {
			b.waitOversize(end)
		}
	case b.quietWaits && ahead <= QuietWaitDepth && b.quiet():
		// The record was accepted: what the drainer answers (failures
		// since the last Flush) is not this call's result. Its failure,
		// if any, is counted and reported by OnError, Flush and Close as
		// for any record.
		_ = b.waitWritten(ctx, end, b.quietWait)
	}
	return nil
}

// EnqueueWrittenCtx is EnqueueWritten bounded by ctx: when ctx ends, a wait
// for room drops the record (ErrDropped), and a wait for its write returns
// ctx.Err() with the record queued, to be written as usual. When the wait
// is skipped or reaches its bound (see waitWritten) the record stays
// queued and the result is nil.
func (b *Bus) EnqueueWrittenCtx(ctx context.Context, p []byte) error {
	end, _, err := b.enqueue(p, ctx.Done())
	if err != nil {
		return err
	}
	if err := b.waitWritten(ctx, end, errorWait); err != ErrWaitBound {
		return err
	}
	return nil
}

// waitOversize waits, with a ring file in Block mode, until the oversize
// record ending at end is written: its bytes are on the heap, not in the
// file, so only the output keeps it across a kill -9. It is back-pressure
// like a full ring, with the room wait's terms: at most BlockTimeout if
// set, and not once the output is stuck. Otherwise the record is kept in
// memory only, and a crash before its write counts it in
// Stats.Unrecovered at the next start.
func (b *Bus) waitOversize(end uint64) {
	// The drainer's answer (failures since the last Flush) is not this
	// call's result: a failed write is counted and reported as for any
	// record.
	_ = b.waitWritten(context.Background(), end, waitSpec{bound: b.blockTimeout, skip: true})
}

// enqueue reserves, copies and commits p. It returns the end of the
// record's reservation and how many bytes of unconsumed entries were ahead
// of it at its reservation. A record up to maxRecord is copied into the ring, with
// wrap padding before it if it does not fit before the region's end; a
// larger one goes to the heap side table behind an 8-byte reference entry
// (commitOversize), so oversize records keep their ring order.
func (b *Bus) enqueue(p []byte, done <-chan struct{}) (end, ahead uint64, err error) {
	oversize := len(p) > b.maxRecord
	need := align8(hdrSize + uint64(len(p)))
	if oversize {
		need = hdrSize
	}
	w := waitState{done: done, need: need}
	for {
		// Head before tail: both only grow and head <= tail at every moment,
		// so h <= t. Read the other way round, a producer paused between the
		// loads could see a head already past its tail, making t+total-h
		// wrap and a ring with room look full.
		h := b.head.Load() // atomic acquire, row head: the space below h is consumed and zeroed
		t := b.tail.Load() // atomic, row tail: may observe closedBit set by Close
		if t&closedBit != 0 {
			b.leaveLine(&w)
			return 0, 0, b.dropClosed()
		}
		off := b.offsetOf(t)
		total := need
		if room := b.capacity - uint64(off); need > room {
			// Padding to the end of the region, record at offset 0. Never
			// for an 8-byte entry: offsets are multiples of 8.
			total = room + need
		}
		if w.me != nil || b.lineBytes.Load() != 0 { // atomic, row lineBytes: producers in line for room (see awaitTurn)
			if again, err := b.awaitTurn(&w, t, h, total); err != nil {
				return 0, 0, err
			} else if again {
				continue
			}
		}
		// Outstanding oversize bytes are bounded by capacity; one record is
		// always admitted when none is outstanding, so any size makes
		// progress. -1: no budget to check (an inline record).
		ob := int64(-1)
		if oversize {
			ob = b.oversizeBytes.Load() // atomic, row oversizeBytes
		}
		if t+total-h > b.capacity || (ob > 0 && ob+int64(len(p)) > int64(b.capacity)) {
			if err := b.waitForRoom(&w, t, h, ob); err != nil {
				b.leaveLine(&w)
				return 0, 0, err
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
		if total != need {
			// Commit the padding at once (release): the drainer skips it; our own
			// record then starts at offset 0.
			atomic.StoreUint64(b.hdr(off), flagCommit|flagPadding|(b.capacity-uint64(off))) // atomic, row header word
			off = 0
		}
		if oversize {
			b.commitOversize(t, off, p)
		} else {
			b.commit(off, p)
		}
		b.wakeAfterCommit(t, t+total-h) // t+total-h: the depth, an upper bound (head may have moved on)
		return t + total, t - h, nil    // h <= t (loaded before tail)
	}
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
		word |= durableSum(rec, b.seq.On()) << sumShift
	}
	// Release store: the payload written above happens-before the drainer's
	// atomic load that observes flagCommit.
	atomic.StoreUint64(b.hdr(off), word) // atomic, row header word
}

// commitOversize puts p in the heap side table and publishes the 8-byte
// reference entry reserved at t (ring offset off).
func (b *Bus) commitOversize(t uint64, off ringOff, p []byte) {
	b.oversizeBytes.Add(int64(len(p))) // atomic, row oversizeBytes
	b.oversize.Add(1)                  // atomic, row oversize
	cp := append([]byte(nil), p...)
	b.mu.Lock()
	b.side[t] = cp
	b.mu.Unlock()
	// Release store after the map insert (mutex) so the drainer finds the entry.
	// The length bits carry the record's length (lenMask if larger), which
	// only ring-file recovery reads: the drainer ignores them.
	atomic.StoreUint64(b.hdr(off), flagCommit|flagOversize|min(uint64(len(p)), lenMask)) // atomic, row header word
}

// wakeAfterCommit wakes the drainer if it may be waiting for the record
// reserved at t, just committed, with depth bytes queued up to its end.
//
// The state word is loaded only when the drainer may be idle because of this
// record: when it has consumed everything before it (head >= t; head can
// be past t only by the wrap padding at the start of our own reservation),
// or past the wake backlog. Otherwise an earlier record is still
// unconsumed, and the drainer is either running or will be woken by that
// record's producer, which runs this same check after its commit.
//
// Lost-wake-up argument (sync/atomic is sequentially consistent): the
// drainer stores head, then stParked, then loads the header at its read
// position (park, hasWork); we store the header, then load head, then state.
// If the drainer's header load misses our store, it precedes our head load,
// which therefore sees the drainer's last head (>= t, as the drainer waits at
// our record), and our state load, later still, sees stParked.
func (b *Bus) wakeAfterCommit(t, depth uint64) {
	if depth >= b.wakeBytes || b.head.Load() >= t { // atomic, row head
		if s := b.state.Load(); s != stRunning { // atomic, row state
			b.wake(s, depth)
		}
	}
}

func (b *Bus) dropClosed() error {
	b.dropped.Add(1)       // atomic, row dropped
	b.droppedClosed.Add(1) // atomic, row droppedClosed
	return ErrClosed
}

// wake wakes the drainer if it is parked, or if it is sleeping and the queue
// depth has reached the wake backlog (Bus.wakeBytes). The CAS makes exactly one producer
// send the token; the channel has room for it, so the send never blocks.
func (b *Bus) wake(s uint32, depth uint64) {
	if s == stSleeping && depth < b.wakeBytes {
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
	deadline time.Time       // BlockTimeout's end; zero: none
	done     <-chan struct{} // the ctx of EnqueueUntil, EnqueueWrittenCtx: closed, the wait ends in a drop; nil: never
	need     uint64          // the record's entry in the ring (a waiter's share of Bus.lineBytes)
	me       *roomWaiter     // this producer's place in the line for room; nil: not in it
	front    bool            // me is the line's front: it may reserve
	bypass   bool            // an output logging through its own handler: never in line
	yielded  bool            // the front yielded once before parking
	// stuckCall is the call into the output this producer last found
	// stuck (its start, callSince), 0 if none (roomGivesUp).
	stuckCall int64
}

// waitForRoom handles a ring that had no room at tail t and head h (or, with ob >= 0,
// an oversize budget that held ob bytes): it drops (Drop mode, a closed
// done channel, a Block wait that gave up: see roomGivesUp, asked each
// time a park's timer fires), or waits for
// the drainer to free space: in line (roomline.go), where only the front
// yields once, then parks. A nil return means "try again".
func (b *Bus) waitForRoom(w *waitState, t, h uint64, ob int64) error {
	b.kick()                // a full ring is past any wake backlog: make sure the drainer runs
	if b.head.Load() != h { // atomic, row head: h was stale (the drainer moved on, or rewound: positions jump): look again
		return nil
	}
	if b.overflow == Drop || chanClosed(w.done) {
		return b.drop(t)
	}
	if w.me == nil && b.join(w) {
		return nil // first in line, or behind those who came first
	}
	if w.bypass || (!w.deadline.IsZero() && !time.Now().Before(w.deadline)) {
		return b.drop(t)
	}
	if !w.yielded {
		w.yielded = true // the drainer may be a few instructions from freeing room
		runtime.Gosched()
		return nil
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
	tm := time.NewTimer(b.roomStep(w)) // then look again for a stuck output or the deadline
	defer tm.Stop()
	select {
	case <-ch:
	case <-tm.C:
		if b.roomGivesUp(w) { // looks a roomStep apart
			return b.drop(t)
		}
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
