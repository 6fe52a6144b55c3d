package bus

import (
	"sync/atomic"
	"time"
)

// waitOutcome says how a drainer's wait ended.
type waitOutcome uint8

const (
	waitTimedOut waitOutcome = iota // the timer fired
	waitWoken                       // a wake-up token, or a reason found before waiting
	waitAborted                     // a Close gave up (abort)
)

// idleWait is the drainer's one way to wait for producers, Flush, Sync and
// Close: it publishes st (stSleeping, stParked or stWaitWT) in Bus.state,
// looks once more for a reason not to wait (ready), and waits for a wake-up
// token, for dur if dur > 0, or until Close gives up.
//
// Lost-wake-up proof (Go's sync/atomic operations are sequentially
// consistent). Every waker first publishes its reason (a committed header,
// wtHead, flushPending, closedBit, a gap), then loads state and, if it is
// not stRunning, CASes it to stRunning and sends the one token into the
// 1-slot wakeCh (Bus.wake, Bus.kick). We store st, then load the reasons
// (ready). In the single total order either our load comes after the
// waker's publication (ready is true and we do not wait), or its load of
// state comes after our store (it sees st and sends the token, which the
// channel keeps until we take it). If ready is true but our CAS back to
// stRunning fails, a waker took the state first: its token is, or will be,
// in the channel, and the select takes it at once. Producers wake a
// sleeping drainer (stSleeping) only past the high watermark: below it the
// sleep's own bound (at most MaxLatency/2) is the wake-up.
func (d *drainer) idleWait(st uint32, dur time.Duration, ready func() bool) waitOutcome {
	b := d.b
	b.state.Store(st) // seq-cst, before ready's loads (see above)
	if ready() && b.state.CompareAndSwap(st, stRunning) {
		return waitWoken
	}
	var expired <-chan time.Time
	if dur > 0 {
		d.timer.Reset(dur)
		expired = d.timer.C
	} else {
		b.parks.Add(1)
	}
	out := waitWoken
	select {
	case <-expired: // nil without a timer: never
		out = waitTimedOut
	case <-b.wakeCh:
	case <-b.abort:
		out = waitAborted
	}
	if dur > 0 && out != waitTimedOut {
		d.timer.Stop() // Go 1.23 timers: no stale tick survives Stop
	}
	b.state.Store(stRunning)
	return out
}

// sleepFor sleeps up to dur. With wakeable, it is an idle sleep that a
// producer past the high watermark, a Flush, Sync or Close ends early;
// without, a retry back-off that only Close's give-up ends. It returns
// false if Close gave up.
func (d *drainer) sleepFor(dur time.Duration, wakeable bool) bool {
	if wakeable {
		return d.idleWait(stSleeping, dur, d.readyWanted) != waitAborted
	}
	d.timer.Reset(dur)
	select {
	case <-d.timer.C:
		return true
	case <-d.b.abort:
		d.timer.Stop()
		return false
	}
}

// park waits without a timeout until a producer, Flush or Close wakes it.
func (d *drainer) park() { d.idleWait(stParked, 0, d.readyHasWork) }

// committedAtPos reports whether the entry at the read position is
// committed, or a write-through past head is there to adopt.
func (d *drainer) committedAtPos() bool {
	b := d.b
	return (d.pos-d.head < b.capacity && atomic.LoadUint64(b.hdr(b.offsetOf(d.pos)))&flagCommit != 0) ||
		b.wtHead.Load() > d.head // a write-through to adopt (see tryWriteThrough's wake-up)
}
