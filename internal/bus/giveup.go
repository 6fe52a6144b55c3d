package bus

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Close whose context ends gives up: before it returns, every record not
// written is counted as failed, every caller waiting for the drainer is
// answered, and no new call into the output starts. The drainer may be
// stuck in a call into the output (a hung pipe, a dead collector) and
// never return; then Close does the final count itself, from the drainer's
// state, which the drainer does not touch while it is in such a call, and
// the drainer exits once the call returns and the count is done.
//
// The handshake is one word, Bus.call:
//
//	callNone --enterCall--> callOut --leaveCall--> callNone
//	                           \--giveUp (CAS)--> callAbandoned (the drainer exits at leaveCall)
//
// enterCall stores callOut, then loads aborted; giveUp stores aborted,
// then CASes call. All sequentially consistent: either the drainer sees
// aborted and makes no call, or giveUp sees callOut and takes over. When
// giveUp finds callNone, the drainer is in its own code, where every wait
// also ends on abort, and counts itself at the top of its loop (abandon).
const (
	callNone      = 0
	callOut       = 1 // in a call into the output
	callAbandoned = 2
)

// giveUpState is the give-up of a Close whose context ended: the abort
// channel every wait also watches, the flag a call into the output checks
// first, the drainer's call state, and whether the books are final. Its
// words are in docs/design.md's protocol table.
type giveUpState struct {
	abort     chan struct{} // closed when a Close ctx expired: give up on the remaining records
	abortOnce sync.Once
	aborted   atomic.Bool   // a Close gave up: stored before call's CAS, so one of the two sees the other (handshake above)
	call      atomic.Uint32 // callNone, callOut, callAbandoned: the handshake's word
	final     atomic.Bool   // the books are final after a give-up: stored after its counts, which Stats loads after it
	// abortCause (the context's error) and stuckFor (how long the call in
	// flight had run) are set by giveUp before aborted, for GiveUpError.
	abortCause error
	stuckFor   time.Duration
}

// enterCall is called before each call into the output. It returns false,
// making no call, once a Close has given up.
func (d *drainer) enterCall() bool {
	b := d.b
	b.call.Store(callOut) // atomic, row call: seq-cst, before the load of aborted (see above)
	if b.aborted.Load() { // atomic, row aborted
		b.call.Store(callNone) // atomic, row call
		return false
	}
	// The call keeps its OS thread, so that the thread's state tells
	// whether it is blocked or merely descheduled (outputWatch.stuck): a
	// goroutine that may move between threads leaves behind a thread
	// that sleeps while it runs elsewhere. Only for the call: a locked
	// goroutine's every wake-up switches OS threads, which on a loaded
	// machine costs a quiet caller's round trip milliseconds.
	runtime.LockOSThread()
	b.callTid.Store(threadID())     // atomic, row callTid: before callSince, which callers load first and again after it
	b.callSince.Store(b.nanotime()) // atomic, row callSince: callers read it to see a stuck output
	return true
}

// leaveCall is called after the call. If a Close gave up meanwhile, the
// drainer goroutine exits here once that Close has made the books final.
func (d *drainer) leaveCall() {
	b := d.b
	b.callSince.Store(0) // atomic, row callSince: no call in flight
	runtime.UnlockOSThread()
	if !b.call.CompareAndSwap(callOut, callNone) { // atomic, row call: giveUp may have moved it to callAbandoned
		<-b.stopped // the give-up's count may still read the ring, which run's deferred calls release
		runtime.Goexit()
	}
}

// giveUp is Close's end when its context ended first, with cause, the
// context's error; it returns once the books are final (stopped is
// closed), which takes no call into the output.
func (b *Bus) giveUp(cause error) {
	b.abortOnce.Do(func() {
		b.abortCause = cause
		if since := b.callSince.Load(); since != 0 { // atomic, row callSince: the drainer's call into the output is in flight
			b.stuckFor = time.Duration(b.nanotime() - since)
		}
		b.aborted.Store(true)                              // atomic, row aborted: seq-cst, before the CAS of call (see above); publishes the two fields above to the drainer
		close(b.abort)                                     // ends the drainer's sleeps and parks
		if b.call.CompareAndSwap(callOut, callAbandoned) { // atomic, row call
			// The drainer is in a call into the output and will not touch
			// its state until the call returns; then it exits.
			b.d.abandon()
			b.rep.Stop()
		}
	})
	<-b.stopped // the drainer counts itself at once when it was not in a call
}

// abandon makes the books final after a give-up, on the drainer (at the
// top of its loop) or on Close (during the drainer's call): the batch in
// hand and everything left in the ring count as failed, except what the
// batch had already written, and every waiter is answered.
func (d *drainer) abandon() {
	b := d.b
	written, wbytes, failed, lostBytes, markers := d.tally(d.progIdx)
	left, leftBytes := d.countLeft()
	failed += left
	lostBytes += leftBytes
	b.takeGaps(^uint64(0), true) // their drops are counted; no marker will be written
	b.written.Add(written)       // atomic, row written
	b.writtenBytes.Add(wbytes)   // atomic, row writtenBytes
	b.markers.Add(markers)       // atomic, row markers
	b.failed.Add(failed)         // atomic, row failed
	b.final.Store(true)          // atomic, row final: after the counts: Stats loads final first (Stats)
	total := b.failed.Load()     // atomic, row failed
	b.closeErr = &GiveUpError{Output: b.output, Stuck: b.stuckFor, Lost: failed, LostBytes: lostBytes,
		Failed: total, LastErr: d.lastErr, Err: b.abortCause} // every failure of the bus's life, as finish reports (see Close)
	d.takeFlushes() // the drainer is in its call or gone: its state is ours
	d.answerAll(nil, total)
	close(b.stopped)
}

// countLeft counts the records, and their bytes, between the drainer's
// read position and the final tail, releasing oversize ones.
func (d *drainer) countLeft() (n, bytes uint64) {
	b := d.b
	end := b.tail.Load() &^ closedBit // atomic, row tail: final: closedBit was set before any give-up
	b.walkQueued(d.pos, end, true, func(p, h uint64) {
		n++
		if h&flagOversize == 0 {
			bytes += h & lenMask
			return
		}
		b.mu.Lock()
		b.oversizeBytes.Add(-int64(len(b.side[p]))) // atomic, row oversizeBytes
		bytes += uint64(len(b.side[p]))
		delete(b.side, p)
		b.mu.Unlock()
	})
	return n, bytes
}

// GiveUpError is Close's error when its context ended before every record
// was written: the records still queued (and the batch in the output's
// hands) were counted as failed, and the output may have hung.
type GiveUpError struct {
	Output    string        // the output's name (see outputName)
	Stuck     time.Duration // how long the call into the output in flight had run; 0: none was
	Lost      uint64        // records the give-up counted as failed (in Stats.Failed)
	LostBytes uint64        // their size
	Failed    uint64        // every record that failed in the bus's life, Lost included
	LastErr   error         // the output's last error, if it failed; nil if none
	Err       error         // the context's error
}

// Error implements error.
func (e *GiveUpError) Error() string {
	what := "the output was still being written to"
	if e.Stuck > 0 {
		what = fmt.Sprintf("the output hung: a call into it had not returned after %v", e.Stuck.Round(time.Millisecond))
	}
	s := fmt.Sprintf("asyncbus: close %s: gave up when Close's context ended (%v): %s; %d records (%d bytes) not written, counted as failed",
		e.Output, e.Err, what, e.Lost, e.LostBytes)
	if e.Failed > e.Lost {
		s += fmt.Sprintf(" (%d records failed in all)", e.Failed)
	}
	if e.LastErr != nil {
		s += "; the output's last error: " + e.LastErr.Error()
	}
	return s
}

// Unwrap returns the context's error.
func (e *GiveUpError) Unwrap() error { return e.Err }
