package bus

import (
	"sync/atomic"
	"time"
)

// idleStrategy is how the drainer waits when it has nothing to write, and
// how producers, Flush, Sync and Close wake it (as Aeron's IdleStrategy or
// the Disruptor's WaitStrategy): one sleep after work, then a park; a
// wake-up token ends either. Its words are in docs/design.md's protocol
// table.
type idleStrategy struct {
	state   atomic.Uint32 // stRunning / stSleeping / stParked: stored before the reasons are loaded (idleWait's proof)
	wakeups atomic.Uint64 // Stats.Wakeups: tokens sent, added by the waker whose CAS won (a count)
	parks   atomic.Uint64 // Stats.Parks: unbounded waits begun, the drainer its one writer (a count)
	wakeCh  chan struct{} // capacity 1: a wake-up token is never lost and never blocks the sender

	// Drainer-private.
	timer *time.Timer // the drainer's one timer: idle sleeps, gathers, retry back-offs
	slept bool        // the sleep after work is done: the next idle step parks
}

func (s *idleStrategy) init() {
	s.wakeCh = make(chan struct{}, 1)
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
}

// wake ends the drainer's wait in state st (not stRunning): the CAS makes
// exactly one waker send the token; the channel has room for it, so the
// send never blocks.
func (s *idleStrategy) wake(st uint32) {
	if s.state.CompareAndSwap(st, stRunning) { // atomic, row state: one waker per wait
		s.wakeups.Add(1) // atomic, row wakeups
		select {
		case s.wakeCh <- struct{}{}:
		default: // a token is already pending
		}
	}
}

// Drainer states, in idleStrategy.state.
const (
	stRunning  = 0
	stSleeping = 1 // bounded sleep (<= MaxLatency/2); producers wake it only past the wake backlog
	stParked   = 2 // unbounded wait; the first producer that commits wakes it
)

// waitOutcome says how a drainer's wait ended.
type waitOutcome uint8

const (
	waitTimedOut waitOutcome = iota // the timer fired
	waitWoken                       // a wake-up token, or a reason found before waiting
	waitAborted                     // a Close gave up (abort)
)

// idleWait is the drainer's one way to wait for producers, Flush, Sync and
// Close: it publishes st (stSleeping or stParked) in Bus.state,
// looks once more for a reason not to wait (ready), and waits for a wake-up
// token, for dur if dur > 0, or until Close gives up.
//
// Lost-wake-up proof (Go's sync/atomic operations are sequentially
// consistent). Every waker first publishes its reason (a committed header,
// flushPending, closedBit, a gap), then loads state and, if it is
// not stRunning, CASes it to stRunning and sends the one token into the
// 1-slot wakeCh (Bus.wake, Bus.kick). We store st, then load the reasons
// (ready). In the single total order either our load comes after the
// waker's publication (ready is true and we do not wait), or its load of
// state comes after our store (it sees st and sends the token, which the
// channel keeps until we take it). If ready is true but our CAS back to
// stRunning fails, a waker took the state first: its token is, or will be,
// in the channel, and the select takes it at once. Producers wake a
// sleeping drainer (stSleeping) only past the wake backlog: below it the
// sleep's own bound (at most MaxLatency/2) is the wake-up.
func (d *drainer) idleWait(st uint32, dur time.Duration, ready func() bool) waitOutcome {
	return d.b.idleStrategy.wait(st, dur, ready, d.b.abort)
}

// wait is idleWait: see there.
func (s *idleStrategy) wait(st uint32, dur time.Duration, ready func() bool, abort <-chan struct{}) waitOutcome {
	s.state.Store(st)                                     // atomic, row state: seq-cst, before ready's loads (see idleWait)
	if ready() && s.state.CompareAndSwap(st, stRunning) { // atomic, row state: a waker may have taken it first
		return waitWoken
	}
	var expired <-chan time.Time
	if dur > 0 {
		s.timer.Reset(dur)
		expired = s.timer.C
	} else {
		s.parks.Add(1) // atomic, row parks
	}
	out := waitWoken
	select {
	case <-expired: // nil without a timer: never
		out = waitTimedOut
	case <-s.wakeCh:
	case <-abort:
		out = waitAborted
	}
	if dur > 0 && out != waitTimedOut {
		s.timer.Stop() // Go 1.23 timers: no stale tick survives Stop
	}
	s.state.Store(stRunning) // atomic, row state
	return out
}

// sleepFor sleeps up to dur. With wakeable, it is an idle sleep that a
// producer past the wake backlog, a Flush, Sync or Close ends early;
// without, a retry back-off that only Close's give-up ends. It returns
// false if Close gave up.
func (d *drainer) sleepFor(dur time.Duration, wakeable bool) bool {
	if wakeable {
		return d.idleWait(stSleeping, dur, d.readyWanted) != waitAborted
	}
	d.b.timer.Reset(dur)
	select {
	case <-d.b.timer.C:
		return true
	case <-d.b.abort:
		d.b.timer.Stop()
		return false
	}
}

// park waits without a timeout until a producer, Flush or Close wakes it.
func (d *drainer) park() { d.idleWait(stParked, 0, d.readyHasWork) }

// committedAtPos reports whether the entry at the read position is
// committed.
func (d *drainer) committedAtPos() bool {
	b := d.b
	return d.pos-d.head < b.capacity && atomic.LoadUint64(b.hdr(b.offsetOf(d.pos)))&flagCommit != 0 // atomic, row header word
}
