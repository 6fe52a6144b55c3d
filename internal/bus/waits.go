package bus

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/outputcall"
)

// Every wait for the output is one rule, waitWritten (docs/design.md, One
// writer, one rule for waits; docs/guarantees.md has each wait's bound).
const (
	// ErrorWaitMax bounds an Error record's wait: 250 ms kept 160 of 160 Error lines before os.Exit behind a full ring.
	// The wait is made only when the output's pace writes the bytes ahead within StuckAfter (errorWait.reach).
	ErrorWaitMax = 250 * time.Millisecond
	// StuckAfter: a call in flight this long (thread blocked) is stuck; 50 ms keeps a request behind a hung output within 100 ms.
	StuckAfter = 50 * time.Millisecond
	// SyncWaitMax bounds a SyncLevel record's wait (SyncBounded): a disk's sync may take seconds.
	SyncWaitMax = 5 * time.Second
	// QuietWaitDepth: a record behind at most this waits for its write (quiet wait): a few goroutines' lines of a moment.
	QuietWaitDepth = 8 << 10
	// QuietWaitRate: a program logging at most this many records a second, a burst of as many, is quiet; waits cost it 1.3 % of a core at most.
	QuietWaitRate = 256
)

// ErrWaitBound is returned by SyncBounded when its wait was skipped or
// reached its bound: the records stay queued.
var ErrWaitBound = errors.New("the output did not answer within the wait's bound; the records stay queued")

// outputWatch is what callers read of the output: the drainer's call in
// flight, its measured pace and the quiet wait's rate limit (words in
// docs/design.md's protocol table).
type outputWatch struct {
	epoch      time.Time     // monotonic origin of the bus's clock (nanotime)
	stuckAfter int64         // StuckAfter in ns (tests may raise it)
	callSince  atomic.Int64  // start of the drainer's call in flight (nanotime), 0 if none: one writer; a stale value is one look late
	callTid    atomic.Int32  // the drainer's OS thread, which it keeps (0: unknown): stored once, before the first call
	failing    atomic.Bool   // the last call failed, until one makes progress: a stale value only skips or makes one bounded wait
	outRate    atomic.Uint64 // the output's measured bytes/s (outrate.go), 0 until measured: a snapshot, as failing
	callNs     atomic.Int64  // the least time a recent call into the output took (outrate.go): a snapshot, as failing
	quietFrom  atomic.Int64  // when the program is quiet again (nanotime; countRecords): a stale value skips or makes one bounded wait
}

// nanotime is the bus's monotonic clock: ns since New, never 0 after it
// (callSince uses 0 for "no call in flight").
func (o *outputWatch) nanotime() int64 { return int64(time.Since(o.epoch)) + 1 }

// stuckCall is the start (callSince) of the call into the output in
// flight if the output is stuck, else 0: in flight for over after
// (StuckAfter, or a longer wait's own bound: a SyncLevel record behind a
// 50 ms write still gets its sync) while its thread sleeps or waits for
// I/O and no goroutine waits for a processor, both read only then
// (docs/design.md, One writer); or for over StuckBusyAfter in any case.
func (o *outputWatch) stuckCall(bound time.Duration) int64 {
	after := max(o.stuckAfter, int64(bound))
	since := o.callSince.Load() // atomic, row callSince: the drainer's enterCall
	if since == 0 {
		return 0
	}
	d := o.nanotime() - since
	switch {
	case d <= after:
		return 0
	case d > max(after, o.stuckAfter*int64(StuckBusyAfter/StuckAfter)):
		return since
	}
	tid := o.callTid.Load()          // atomic, row callTid: stored before callSince by each call
	if o.callSince.Load() != since { // atomic, row callSince: a later call, maybe on another thread: tid may not be since's
		return 0
	}
	if threadWaits(tid) && !goroutinesRunnable() {
		return since
	}
	return 0
}

// StuckBusyAfter is stuck in any case: past the hundreds of ms a saturated process leaves the drainer descheduled.
const StuckBusyAfter = time.Second

// runnableMetric is the runtime's count of goroutines waiting for a
// processor (Go 1.26).
const runnableMetric = "/sched/goroutines/runnable:goroutines"

// goroutinesRunnable reports whether a goroutine waits for a processor;
// true when the runtime cannot say. Only a caller that found a call in
// flight for over StuckAfter pays for it.
func goroutinesRunnable() bool {
	s := []metrics.Sample{{Name: runnableMetric}}
	metrics.Read(s)
	return s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() > 0
}

// quiet reports whether the program logs quietly now: at most
// QuietWaitRate records a second, after a burst of as many (the
// drainer's count, countRecords). A clock read and a load.
func (o *outputWatch) quiet() bool {
	return o.nanotime() >= o.quietFrom.Load() // atomic, row quietFrom
}

// countRecords adds n records written at now to the drainer's count of
// the program's records (GCRA: QuietWaitRate a second, a burst of as
// many, its debt capped at one burst more) and publishes when the program
// is quiet again.
func (d *drainer) countRecords(n int, now int64) {
	const interval, burst = int64(time.Second / QuietWaitRate), int64(time.Second)
	d.quietTAT = min(max(d.quietTAT, now)+int64(n)*interval, now+2*burst)
	d.b.quietFrom.Store(d.quietTAT - burst) // atomic, row quietFrom: the drainer is its only writer
}

// inOutputCall reports whether the calling goroutine is inside a call into
// the output (an output that logs through the handler it serves, from its
// Write, WriteBatch or Sync, which run on the drainer): waiting for the
// drainer there would wait for the call that waits. Only a caller about to
// wait pays for the stack walk, and only while a call is in flight; it
// allocates nothing (an Error record's wait asks it).
func (o *outputWatch) inOutputCall() bool {
	if o.callSince.Load() == 0 { // atomic, row callSince: no call in flight, so not inside one
		return false
	}
	sites := outputCallSites()
	var pcs [32]uintptr
	for skip := 2; ; skip += len(pcs) {
		n := runtime.Callers(skip, pcs[:])
		for _, pc := range pcs[:n] {
			if slices.Contains(sites[:], pc) {
				return true
			}
		}
		if n < len(pcs) {
			return false
		}
	}
}

// outputCallSites are the return addresses of the output wrappers' calls
// into the output (package outputcall), as they appear on the stack of a
// goroutine inside such a call: each wrapper has one call site, and its
// deferred recover keeps it from being inlined. Found once, by calling
// each wrapper with a probe that records its caller's return address.
var outputCallSites = sync.OnceValue(func() [3]uintptr {
	var p siteProbe
	_, _ = outputcall.Write(&p, nil)
	_, _ = outputcall.WriteBatch(&p, nil)
	_ = outputcall.Sync(&p)
	return p.sites
})

// siteProbe records where each of its methods was called from.
type siteProbe struct{ sites [3]uintptr }

func (p *siteProbe) caller(i int) {
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // 3: Callers, caller, the probe's method
	p.sites[i] = pcs[0]
}

func (p *siteProbe) Write([]byte) (int, error)        { p.caller(0); return 0, nil }
func (p *siteProbe) WriteBatch([][]byte) (int, error) { p.caller(1); return 0, nil }
func (p *siteProbe) Sync() error                      { p.caller(2); return nil }

// waitSpec is one wait's terms (see waitWritten).
type waitSpec struct {
	bound time.Duration // 0: none but ctx (and, with skip, the output getting stuck)
	sync  bool          // sync the output once pos is written (Flush, Sync, SyncLevel)
	mark  bool          // the answer moves the "failures reported" mark (Flush only)
	skip  bool          // a log call's wait: skipped or ended when it cannot succeed
	reach time.Duration // with skip: made only when the pace writes the bytes ahead within reach (0: bound)
}

// The waits, one row each of docs/guarantees.md's table.
var (
	// A quiet wait is made when the output writes the record within
	// batchSpan at its pace, about one batch's call: a caller waits for
	// a write that costs little, never for a slow output's call. Its
	// bound is Bus.quietWait's, MaxLatency at most DefaultMaxLatency.
	quietWait = waitSpec{skip: true, reach: batchSpan}
	// An Error wait is made when the output can write what is ahead within
	// StuckAfter at its pace, so that a request behind an overloaded output
	// waits about that at most; its bound covers a drainer descheduled on
	// a busy machine, where a program's Error line before os.Exit needs it.
	errorWait = waitSpec{bound: ErrorWaitMax, skip: true, reach: StuckAfter}
	syncWait  = waitSpec{bound: SyncWaitMax, sync: true, skip: true}
	flushWait = waitSpec{sync: true, mark: true}
	syncCall  = waitSpec{sync: true}
)

// hopeless reports whether a log call's wait for pos within bound cannot
// succeed or is not worth making: the output is stuck or failing, the
// caller is inside a call into it, or at its measured pace it cannot
// write the bytes ahead of pos, in one call more, within reach.
func (b *Bus) hopeless(pos uint64, bound, reach time.Duration) bool {
	if b.stuckCall(bound) != 0 || b.failing.Load() || b.inOutputCall() { // atomic, row failing
		return true
	}
	h := b.head.Load()       // atomic, row head: a snapshot; everything below it is written
	rate := b.outRate.Load() // atomic, row outRate: a stale pace only skips or makes one bounded wait
	call := b.callNs.Load()  // atomic, row callNs: as outRate
	need := time.Duration(call)
	if rate > 0 {
		need += time.Duration(float64(pos-h) / float64(rate) * 1e9)
	}
	if reach == 0 || h >= pos || need <= reach {
		return false
	}
	// No committed entry at h: the space from h may be a rewind's skipped
	// bytes (rewind), not a backlog; a bounded wait then costs little. A
	// ring file never rewinds, and its mapping is gone after Close.
	return b.file != nil || atomic.LoadUint64(b.hdr(b.offsetOf(h))) != 0 // atomic, row header word
}

// waitWritten is the one wait: it returns once the drainer has written
// everything below pos (and synced the output with w.sync), with the
// drainer's answer (see Flush); ctx.Err() when ctx ends first;
// ErrWaitBound when w.bound passes first, or, for a log call's wait
// (w.skip), when the wait cannot succeed (hopeless): at once, or at a
// look during it, with the head and pace of then. The records stay queued.
//
// It allocates nothing once warm (an Error record's promise): its answer
// channel and timer come from the bus's free slots (waitSlot).
func (b *Bus) waitWritten(ctx context.Context, pos uint64, w waitSpec) error {
	select {
	case <-b.stopped:
		return b.closeErr // the drainer is done: nobody would take the request
	default:
	}
	reach := w.reach
	if reach == 0 {
		reach = w.bound
	}
	if w.skip && b.hopeless(pos, w.bound, reach) {
		return ErrWaitBound
	}
	s := b.takeSlot()
	req := flushReq{target: pos, sync: w.sync, mark: w.mark, ch: s.ch}
	b.request(req)
	var tick <-chan time.Time
	step, deadline := w.bound, int64(0)
	if w.bound > 0 {
		deadline = b.nanotime() + int64(w.bound)
	}
	if w.skip {
		step = StuckAfter / 2 // look again (hopeless) this often
		if w.bound > 0 {
			step = min(step, w.bound)
		}
	}
	if step > 0 {
		s.tm.Reset(step) // stopped and drained when it was put back
		tick = s.tm.C
	}
	var err error
	answered := false
wait:
	for {
		select {
		case err = <-s.ch:
			answered = true // answered once, now empty: reusable
			break wait
		case <-b.stopped:
			b.forget(req)
			err = b.closeErr
			break wait
		case <-ctx.Done():
			err = ctx.Err() // still queued
			break wait
		case <-tick:
			left := time.Duration(deadline - b.nanotime())
			if (w.bound > 0 && left <= 0) || (w.skip && b.hopeless(pos, w.bound, reach)) {
				err = ErrWaitBound // still queued; the drainer answers into ch's buffer later
				break wait
			}
			if w.bound > 0 {
				step = min(step, left)
			}
			s.tm.Reset(step) // fired and received: no tick pending
		}
	}
	if !s.tm.Stop() {
		// Fired (or firing): with GODEBUG=asynctimerchan=1 (pre-Go 1.23
		// timers) its tick may still be queued; drain it so that the next
		// wait does not end at once.
		select {
		case <-s.tm.C:
		default:
		}
	}
	if answered {
		b.putSlot(s)
	}
	return err
}

// waitSlot is a wait's answer channel (buffered 1) and timer, reused
// through Bus.slots so that a wait allocates nothing (not even under the
// race detector, whose sync.Pool drops items at random). A slot goes back
// only after its channel delivered its one answer; one whose wait ended
// otherwise is left to the drainer's late answer.
type waitSlot struct {
	ch chan error
	tm *time.Timer
}

// takeSlot takes a free slot, or makes one.
func (b *Bus) takeSlot() *waitSlot {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.slots); n > 0 {
		s := b.slots[n-1]
		b.slots = b.slots[:n-1]
		return s
	}
	s := &waitSlot{ch: make(chan error, 1), tm: time.NewTimer(time.Hour)}
	s.tm.Stop()
	return s
}

// putSlot returns a slot whose channel is empty and whose timer is
// stopped and drained.
func (b *Bus) putSlot(s *waitSlot) {
	b.mu.Lock()
	b.slots = append(b.slots, s)
	b.mu.Unlock()
}
