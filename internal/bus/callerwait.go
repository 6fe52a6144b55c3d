package bus

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The bounds on what a caller of Enqueue or EnqueueWritten may wait for
// (Config.WriteThrough). They are the only waits a log call makes for the
// output while the ring has room; the root's guarantee table quotes them.
const (
	// SlowCall is the breaker's bound for outputs of unknown kind. After
	// SlowCallsToTrip calls into the output (writes or syncs, by the
	// drainer or a write-through) in a row that took longer, or one that
	// took (or has been in flight for) over VerySlowCall, the output is
	// slow: callers neither write through nor wait quietly. The first
	// call that returns within the bound resets the breaker.
	SlowCall = 500 * time.Microsecond
	// VerySlowCall: one call of an output of unknown kind this slow trips
	// the breaker at once: it is the quiet wait's own bound, so a caller
	// would have waited for nothing.
	VerySlowCall = QuietWaitMax
	// SlowDirectCall is SlowCall for outputs a caller may write to itself
	// (files, pipes with room), whose writes cannot block for long unless
	// the file system is sick: only SlowCallsToTrip calls in a row over it
	// trip the breaker, or one in flight for StuckDirectCall (a wall clock
	// cannot tell a sick disk from a CPU-starved process: see
	// docs/design.md, The breaker).
	SlowDirectCall = QuietWaitMax
	// StuckDirectCall: a call into a file or pipe in flight this long
	// (a pipe whose reader stopped) trips the breaker while it lasts.
	StuckDirectCall = 100 * time.Millisecond
	// SlowCallsToTrip is how many calls over SlowCall in a row trip the
	// breaker.
	SlowCallsToTrip = 4
	// QuietWaitMax bounds the quiet wait (see Config.WriteThrough).
	QuietWaitMax = 20 * time.Millisecond
	// ErrorWaitMax bounds the wait of a record that must be written before
	// its call returns (EnqueueWritten: the root's Error records). The wait
	// is skipped while a call into the output has been in flight for
	// longer, or the last one took longer: the output is stuck.
	ErrorWaitMax = time.Second
	// SyncWaitMax bounds the wait of Sync's callers that give no deadline
	// of their own (the root's SyncLevel records): a disk's sync may take
	// seconds, a hung output for ever.
	SyncWaitMax = 5 * time.Second
)

// callerGate is what the caller policy reads of the output: the breaker
// (the call in flight, the last call's speed), the quiet check (when the
// last call ended), and the callers' rate limits, with their bounds and
// the bus's clock. Calls into the output write it once each (beginCall,
// endCall); producers read it only when they may touch or wait for the
// output. Its words are in the package documentation's caller gate table.
type callerGate struct {
	// Read-only after New.
	epoch        time.Time // monotonic origin of the bus's clock (nanotime, the rate limits)
	slowCall     int64     // the breaker's bounds in ns: SlowCall or SlowDirectCall,
	verySlowCall int64     // VerySlowCall or none (MaxInt64),
	inFlightSlow int64     // and VerySlowCall or StuckDirectCall
	quietAfter   int64     // QuietAfter in ns (< 0: always quiet, tests)

	// callSince is when the call into the output in flight began (ns,
	// nanotime), 0 if none; speed is how fast the last one was.
	callSince atomic.Int64
	speed     atomic.Uint32
	// lastCallEnd is when the last call into the output returned (ns,
	// nanotime; 0 before the first): the handler is quiet once it is
	// QuietAfter old and no call is in flight (quiet).
	lastCallEnd atomic.Int64
	// wtLimit is the write-through's rate limit (its CAS is uncontended:
	// only the producer holding wmu uses it, see tryWriteThrough).
	wtLimit rateLimit
	_       pad
	// qwLimit is the quiet wait's rate limit, updated by CAS from any
	// producer that found a short queue (see quietAllow). Its own line: at
	// high rates it is read (not written: the limit is spent) by the few
	// records per drainer round that find a short queue, and it must not
	// make the breaker's line bounce when it is written.
	qwLimit rateLimit
}

// Output speeds, as the breaker records them (the low byte of callerGate.speed),
// slowest last.
const (
	speedFast  = 0 // fewer than SlowCallsToTrip calls over SlowCall in a row, none over VerySlowCall
	speedSlow  = 1 // SlowCallsToTrip in a row, or one over VerySlowCall (or in flight that long): no write-through, no quiet wait
	speedStuck = 2 // the last call, or the one in flight, took longer than ErrorWaitMax: no wait at all
)

// speedStreakShift: callerGate.speed's second byte counts the slow calls in a row.
const speedStreakShift = 8

// nextSpeed is the breaker's transition, as a callerGate.speed word (the speed,
// and the slow calls in a row), after a call that took d ns.
func (b *callerGate) nextSpeed(prev uint32, d int64) uint32 {
	if d <= b.slowCall {
		return speedFast
	}
	streak := min(prev>>speedStreakShift+1, 255)
	speed := uint32(speedFast) // a slow call, but maybe a scheduling hiccup
	switch {
	case d > int64(ErrorWaitMax):
		speed = speedStuck
	case d > b.verySlowCall || streak >= SlowCallsToTrip:
		speed = speedSlow
	}
	return speed | streak<<speedStreakShift
}

// inFlightSpeed is what a call in flight for d ns says of the output.
func (b *callerGate) inFlightSpeed(d int64) uint32 {
	switch {
	case d > int64(ErrorWaitMax):
		return speedStuck
	case d > b.inFlightSlow:
		return speedSlow
	}
	return speedFast
}

// nanotime is the bus's monotonic clock: ns since New, never 0 after it
// (callSince uses 0 for "no call in flight").
func (b *callerGate) nanotime() int64 { return int64(time.Since(b.epoch)) + 1 }

// beginCall marks a call into the output as in flight and returns its
// start. Calls never overlap: the drainer's hold wmu or happen while
// write-throughs are off (owed bytes), and a write-through holds wmu.
func (b *callerGate) beginCall() int64 {
	now := b.nanotime()
	b.callSince.Store(now) // atomic, row callSince: producers read it to see a stuck call (outputSpeed)
	return now
}

// endCall ends the call begun at start and records how fast it was.
func (b *callerGate) endCall(start int64) {
	now := b.nanotime()
	b.lastCallEnd.Store(now) // atomic, row lastCallEnd: before callSince's 0, which quiet loads first
	b.callSince.Store(0)     // atomic, row callSince: see beginCall
	// Load and store, not a CAS: calls never overlap, so endCall has one
	// caller at a time. Stored only on a change, so fast calls leave the
	// line clean.
	prev := b.speed.Load() // atomic, row speed
	if s := b.nextSpeed(prev, now-start); s != prev {
		b.speed.Store(s) // atomic, row speed
	}
}

// outputSpeed is what a caller deciding whether to touch or wait for the
// output knows of it: the last call's speed, or worse if the call in
// flight has already taken longer.
func (b *callerGate) outputSpeed() uint32 {
	s := b.speed.Load() & 0xff  // atomic, row speed: endCall's store; the low byte is the speed
	since := b.callSince.Load() // atomic, row callSince: beginCall's store
	if since != 0 && s != speedStuck {
		s = max(s, b.inFlightSpeed(b.nanotime()-since))
	}
	return s
}

// quiet reports whether the handler is quiet: no call into the output is
// in flight and none has ended for QuietAfter. Busy logging keeps the
// drainer calling, so it is never quiet; the record of a quiet moment, and
// no other, writes itself through.
func (b *callerGate) quiet() bool {
	if b.quietAfter < 0 {
		return true
	}
	// callSince first (seq-cst): endCall stores lastCallEnd before it
	// clears callSince, so a 0 here comes with that call's end.
	if b.callSince.Load() != 0 { // atomic, row callSince
		return false
	}
	end := b.lastCallEnd.Load() // atomic, row lastCallEnd: endCall's store
	return end == 0 || b.nanotime()-end > b.quietAfter
}

// inOutputCall reports whether the calling goroutine is inside a call into
// this process's outputs (an output that logs through the handler it
// serves, from its Write, WriteBatch or Sync): waiting for the drainer
// there would wait for the call that waits. Only a caller about to wait
// pays for the stack walk, and only while a call is in flight.
func (b *callerGate) inOutputCall() bool {
	if b.callSince.Load() == 0 { // atomic, row callSince: no call in flight, so not inside one
		return false
	}
	return onStack(outputWriteFrame, outputWriteBatchFrame, outputSyncFrame)
}

// The wrappers every call into an output goes through (outputcall.go).
const (
	outputWriteFrame      = "github.com/asyncbus/asyncbus/internal/bus.outputWrite"
	outputWriteBatchFrame = "github.com/asyncbus/asyncbus/internal/bus.outputWriteBatch"
	outputSyncFrame       = "github.com/asyncbus/asyncbus/internal/bus.outputSync"
)

// onStack reports whether one of the functions named is on the calling
// goroutine's stack, however deep.
func onStack(names ...string) bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // maybe truncated: grow until the whole stack fits
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		for _, name := range names {
			if f.Function == name {
				return true
			}
		}
		if !more {
			return false
		}
	}
}

// directCheck reports whether a write of n bytes to the output cannot
// block for long, so that a caller may make it itself (a write-through).
type directCheck func(n int) bool

// directWriter returns the check for w: io.Discard and a regular file (an
// *os.File, or an output with a Path() method: filesink.File) always qualify; a pipe
// qualifies while it has room for the record (Linux); anything else
// (terminals, sockets, outputs of unknown kind) never does: its write may
// wait for a reader or a network.
func directWriter(w io.Writer) directCheck {
	if w == io.Discard {
		return always
	}
	switch o := w.(type) {
	case *os.File:
		fi, err := o.Stat()
		switch {
		case err != nil:
			return nil
		case fi.Mode().IsRegular():
			return always
		case fi.Mode()&os.ModeNamedPipe != 0:
			return pipeRoom(o)
		}
	case interface{ Path() string }:
		if p, ok := outputPath(o); ok && p != "" {
			return always
		}
	}
	return nil
}

func always(int) bool { return true }

// quietWaitFor is how long a quiet wait may last.
func (b *Bus) quietWaitFor() time.Duration { return min(QuietWaitMax, b.maxLatency) }

// waitWritten waits until the record ending at end is written, for at most
// bound (the quiet wait's, or an Error record's), or until ctx is done
// (then it returns ctx.Err()). With recheck (the Error wait) it also gives
// up as soon as the output, at its measured rate, can no longer write the
// bytes still ahead of the record within what is left of bound: a rate
// that fell during the wait ends it early instead of at the bound. At the
// bound, or on giving up, the record simply stays queued, as without the
// wait, and it returns nil; otherwise the drainer's answer.
//
// It allocates nothing (the hot path's promise, and quiet waits happen
// within the first records of a burst): its answer channel and timer come
// from pools. A channel goes back only after it delivered its one answer;
// one whose wait ended otherwise is left to the drainer's late answer.
func (b *Bus) waitWritten(ctx context.Context, end uint64, bound time.Duration, recheck bool) error {
	select {
	case <-b.stopped:
		return b.closeErr
	default:
	}
	ch := quietChans.Get().(chan error)
	tm := quietTimers.Get().(*time.Timer)
	deadline := b.nanotime() + int64(bound)
	step := bound
	if recheck {
		step = min(bound, errorRecheck)
	}
	tm.Reset(step) // stopped and drained when it was put back
	req := flushReq{target: end, ch: ch}
	b.request(req)
	var err error
wait:
	for {
		select {
		case err = <-ch:
			quietChans.Put(ch) // answered once, now empty: reusable
			break wait
		case <-b.stopped:
			b.forget(req)
			err = b.closeErr
			break wait
		case <-ctx.Done():
			err = ctx.Err() // still queued, as at the bound
			break wait
		case <-tm.C:
			// Still queued, written as usual; the drainer answers into
			// ch's buffer later, so ch is not reused.
			left := time.Duration(deadline - b.nanotime())
			if left <= 0 || (recheck && b.errorWaitHopeless(end, left)) {
				break wait
			}
			tm.Reset(min(step, left)) // fired and received: no tick pending
		}
	}
	if !tm.Stop() {
		// Fired (or firing): with GODEBUG=asynctimerchan=1 (pre-Go 1.23
		// timers) its tick may still be queued; drain it so that the next
		// wait does not end at once. With Go 1.23 timers there is none.
		select {
		case <-tm.C:
		default:
		}
	}
	quietTimers.Put(tm)
	return err
}

// errorRecheck is how often an Error wait checks that it can still
// succeed: the rate's own window (rateWindow), so each check may see a
// new sample.
const errorRecheck = rateWindow

// errorWaitHopeless reports whether the bytes still ahead of the record
// ending at end, at the output's measured rate, take longer than left.
func (b *Bus) errorWaitHopeless(end uint64, left time.Duration) bool {
	h := b.head.Load() // atomic, row head: a snapshot; everything below it is written
	if h >= end {
		return false // written: the answer is on its way
	}
	return !b.writableWithin(end-h, left)
}

// Pools for waitWritten: answer channels (buffered 1, empty) and stopped
// timers.
var (
	quietChans  = sync.Pool{New: func() any { return make(chan error, 1) }}
	quietTimers = sync.Pool{New: func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}}
)

// quietAllow applies the quiet wait's rate limit. Once the limit is spent
// it costs a clock read and one load.
func (b *callerGate) quietAllow() bool { return b.qwLimit.allow(b.nanotime()) }

// waitOversize waits, with a ring file, until the oversize record ending at
// end is written: its bytes are on the heap, not in the file, so only the
// output keeps it across a kill -9. It is back-pressure like a full ring
// (the caller policy's callerWaitWritten for such a record, in Block mode
// without a done channel): it waits until the write, or for at most
// BlockTimeout. Otherwise the record is kept in memory only, and a crash
// before its write counts it in Stats.Unrecovered at the next start.
func (b *Bus) waitOversize(end uint64) {
	// The drainer's answer (failures since the last Flush) is not this
	// call's result: a failed write is counted and reported as for any
	// record.
	_ = b.wait(context.Background(), end, false, false, b.blockTimeout)
}
