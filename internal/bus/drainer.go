package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sinkKind is how the drainer hands a batch to the sink.
type sinkKind int

const (
	sinkCopy   sinkKind = iota // copy into one staging buffer, one Write
	sinkBatch                  // BatchWriter.WriteBatch(views)
	sinkWritev                 // writev(2) through syscall.RawConn, <= iovMax records per call
)

// viewKind says what a batch entry is, for the accounting after the write.
type viewKind uint8

const (
	kRecord   viewKind = iota // inline ring record
	kOversize                 // heap record from the side table
	kMarker                   // drop marker (not a record)
)

// maxStagingKeep is the largest staging buffer (sinkCopy) the drainer keeps
// between batches: a full batch of 4096 records of 200 bytes takes ~0.8 MiB;
// a larger one (oversize records, which may be of any size) is released
// after its write.
const maxStagingKeep = 4 << 20

const (
	idleSleepMin = 50 * time.Microsecond
	maxFailShift = 30
)

// drainer is the state private to the drainer goroutine (no synchronisation).
type drainer struct {
	b       *Bus
	head    uint64 // == b.head, kept locally (the drainer is its only writer)
	pos     uint64 // scan position: end of the entries collected so far
	views   [][]byte
	kinds   []viewKind
	nrec    int    // ring records (inline + oversize) in views
	nent    uint64 // ring entries (including padding) between head and pos
	ovBytes int64  // oversize bytes in views
	target  int

	sleep      time.Duration // next idle sleep
	sleptAtCap bool
	// gather is set after an idle sleep and after a round of fewer than
	// minBatch records: the next batch, if small, waits up to gatherFor for
	// more (see run).
	gather     bool
	gatherFor  time.Duration
	lastGather time.Duration // the last gather wait decided on, 0 for none (tests read it after Close)
	timer      *time.Timer
	now        func() time.Time

	failStreak int
	lastErr    error
	// health is the output's state (health.go). Once a batch spent its
	// retry budget (failing), later batches fail at once, without a call
	// into the sink, until probeAt; the first batch after probeAt, or one
	// a Flush or Close waits for, makes one attempt (probing), and any
	// progress ends the failing state. So a dead output costs callers
	// nothing while it is probed with back-off.
	health    outputHealth
	probeAt   time.Time
	fastFails uint64 // batches failed without a call while failing (tests read it after Close)
	yields    uint64 // times waitUncommitted yielded to a producer (tests read it after Close)
	woken     bool   // holdForProbe was woken: the batch is wanted now (cleared by writeRound)
	// owed is what must reach the output before the next record: the
	// newline that ends a fragment left by a write that failed part-way
	// through a record and could not be cut back (see tear).
	owed []byte
	reqs []pendingFlush
	// spareReqs is the other array of Bus.flushReqs (takeFlushes swaps them).
	spareReqs []flushReq
	// failedAnswered is b.failed when the last Flush was answered: a Flush
	// reports the records that failed since then, so a failure is reported
	// to the next Flush even when it happened before that Flush was called.
	failedAnswered uint64
	limiter        map[string]*limitState
	closing        bool
	closeFail      uint64 // failedAnswered when closing began

	staging []byte
	ends    []int
	marker  []byte
	wv      writevState

	// progIdx is how many leading views of the batch in hand are written:
	// set before each call into the output, for a Close that gives up
	// during the call (giveup.go); 0 between rounds.
	progIdx int
	// callStart is when the drainer's call in flight began (the breaker).
	callStart int64
	// The reasons idleWait looks for, bound once (no closure per wait).
	readyWanted, readyHasWork, readyCommitted func() bool
}

type pendingFlush struct {
	flushReq
	failedAt uint64
}

type limitState struct {
	last       time.Time
	suppressed uint64
}

func (d *drainer) init(b *Bus) {
	d.b = b
	d.views = make([][]byte, 0, b.maxBatch+1)
	d.kinds = make([]viewKind, 0, b.maxBatch+1)
	d.target = b.minBatch
	b.batchTarget.Store(uint64(d.target))
	d.sleep = idleSleepMin
	d.timer = time.NewTimer(time.Hour)
	d.timer.Stop()
	d.now = time.Now
	d.readyWanted, d.readyHasWork, d.readyCommitted = d.wanted, d.hasWork, d.committedAtPos
	d.limiter = make(map[string]*limitState)
	if b.sink == sinkWritev {
		d.wv.init(b.w)
	}
	b.rep.init(b.onError)
}

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// run is the drainer goroutine.
func (b *Bus) run() {
	d := &b.d
	defer close(b.done)
	// Runs before done is closed: the drainer is the reports' only sender,
	// and finish has queued its last one.
	defer b.rep.stop()
	if b.ring != nil {
		// Runs before done is closed: every reservation below the final tail
		// was committed and consumed, and Enqueue after Close never touches the
		// ring, so nothing uses the mapping any more.
		defer b.ring.close()
	}
	for {
		if b.aborted.Load() { // atomic: a Close gave up (giveUp)
			d.abandon()
			return
		}
		d.adoptHead()
		if b.flushPending.Load() {
			d.takeFlushes()
		}
		t := b.tail.Load()
		if t&closedBit != 0 && !d.closing {
			d.closing = true
			d.closeFail = d.failedAnswered // Close reports, like Flush, what failed since the last Flush answer
		}
		urgent := d.closing || len(d.reqs) > 0
		if depth := (t &^ closedBit) - d.head; depth > b.highWater.Load() {
			atomicMax(&b.highWater, depth)
		}
		d.collect()
		if len(d.views) > 0 && d.gather && !urgent && d.nrec < b.minBatch && (t&^closedBit)-d.head < b.hwBytes {
			// Light or moderate load: wait for a worthwhile batch. Flush,
			// Close, a full ring and the high watermark cut the wait short.
			// Without it, a steady producer got a write(2) of ~14 records
			// (3 KB) per round at 1 goroutine: a core's worth of write calls,
			// where one wait makes the batches hundreds of records (see
			// BenchmarkEnqueuePaced). The wait keeps MaxLatency: after an idle
			// sleep (at most MaxLatency/2) it is MaxLatency/2; after a small
			// round, whose write took W, it is MaxLatency-W, at most
			// MaxLatency/2, for a record committed just after that round's
			// collect has waited W already.
			d.lastGather = max(d.gatherFor, 0)
			if d.gatherFor > 0 {
				d.sleepFor(d.gatherFor, true)
				d.collect()
			}
		}
		d.gather = false
		if len(d.views) > 0 && d.holdForProbe(urgent, t) {
			continue
		}
		if len(d.views) > 0 {
			// A small round that nothing urgent asked for: gather the next,
			// for what is left of MaxLatency once this round's write is done.
			small := d.nrec < b.minBatch && !urgent
			var start time.Time
			if small {
				start = d.now()
			}
			d.writeRound()
			if small {
				d.gather = true
				d.gatherFor = min(b.maxLatency/2, b.maxLatency-d.now().Sub(start))
			}
			d.sleep, d.sleptAtCap = idleSleepMin, false
			d.answerFlushes()
			continue
		}
		d.answerFlushes()
		if d.closing {
			// Anything below the final tail not collected yet is a
			// reservation not committed yet: wait for it (a Close that
			// gives up meanwhile ends the wait; the loop's top counts).
			if d.pos >= t&^closedBit {
				d.finish()
				return
			}
			d.waitUncommitted()
			continue
		}
		if len(d.reqs) > 0 || b.gapPos.Load() <= d.pos {
			// Same: a Flush waits on a record being copied or written
			// through, and so does a marker whose gap collect left for
			// after a write-through in flight (hasWork would not let idle
			// park).
			d.waitUncommitted()
			continue
		}
		d.idle()
	}
}

// adoptHead releases what producers wrote through (see Bus.writeThrough1):
// wtHead is past head only while the drainer has nothing collected (pos ==
// head, at the written-through reservation, whose header stays zero), so
// skipping to it loses nothing, and the skipped space was never written, so
// it is zero as released space must be.
func (d *drainer) adoptHead() {
	b := d.b
	if d.pos != d.head {
		return
	}
	// Atomic acquire: pairs with the producer's release store of wtHead.
	if h := b.wtHead.Load(); h > d.head {
		d.head, d.pos = h, h
		// Release store, as in release: only now may producers reserve
		// the memory below h+capacity, i.e. at the old read position.
		b.head.Store(h)
		if b.waiters.Load() > 0 { // seq-cst after the store, as in release
			b.broadcastSpace()
		}
	}
}

func atomicMax(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// collect appends committed entries from d.pos to the batch, up to the
// current target, stopping at the first uncommitted entry or at a drop gap.
func (d *drainer) collect() {
	b := d.b
	for d.nrec < d.target {
		if g := b.gapPos.Load(); g <= d.pos {
			if len(d.views) > 0 {
				return // cut the batch at the gap; the marker opens the next one
			}
			// Not while a write-through holds wmu: it may be writing the
			// record at pos and commit the rest of it there (see
			// Bus.wtRest), which must come before the marker; run waits
			// for it (waitUncommitted). With wmu free none is in flight,
			// and none can start at pos while the gap is pending (its gap
			// check refuses). Nor between the part of a record a
			// write-through wrote and its rest at pos: the marker then
			// opens the next batch, after the record. (A gap at or below
			// pos found after the write-through's gap check was registered
			// at a stale tail by a producer refused concurrently with it.)
			if !b.wmu.TryLock() {
				return
			}
			b.wmu.Unlock()
			if b.wtRest.Load() != d.pos+1 {
				d.takeGap()
			}
		}
		if d.pos-d.head >= b.capacity {
			return // the whole ring is in this batch: the word at pos is our own first header
		}
		off := d.pos & b.mask
		// Acquire load: pairs with the producer's release store of the header,
		// so the payload (or the side-table entry) is visible once we see
		// flagCommit. Consumed space is zeroed, so no stale word can match.
		h := atomic.LoadUint64(b.hdr(off))
		if h&flagCommit == 0 {
			return
		}
		d.nent++
		switch {
		case h&flagPadding != 0:
			d.pos += h & lenMask
			continue
		case h&flagOversize != 0:
			b.mu.Lock()
			rec := b.side[d.pos]
			delete(b.side, d.pos)
			b.mu.Unlock()
			d.views = append(d.views, rec)
			d.kinds = append(d.kinds, kOversize)
			d.ovBytes += int64(len(rec))
			d.pos += hdrSize
		default:
			n := h & lenMask
			d.views = append(d.views, b.mem[off+hdrSize:off+hdrSize+n:off+hdrSize+n])
			d.kinds = append(d.kinds, kRecord)
			d.pos += align8(hdrSize + n)
		}
		d.nrec++
	}
}

// takeGap consumes the gaps at or below the read position and puts their
// marker at the start of the (empty) batch.
func (d *drainer) takeGap() {
	if n := d.b.takeGaps(d.pos, false); n > 0 {
		d.addMarker(n)
	}
}

func (d *drainer) addMarker(n uint64) {
	d.marker = d.formatMarker(n)
	d.views = append(d.views, d.marker)
	d.kinds = append(d.kinds, kMarker)
}

// formatMarker runs the DropMarker hook. A hook that panics or returns
// nothing must not kill the drainer or hide the gap: no line is written and
// OnError is told how many records were lost here.
func (d *drainer) formatMarker(n uint64) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			d.report("mark", fmt.Errorf("%d records dropped here; the drop marker panicked: %v", n, r))
			out = d.marker[:0]
		}
	}()
	out = d.b.dropMarker(d.marker[:0], n)
	if len(out) == 0 {
		d.report("mark", fmt.Errorf("%d records dropped here; the drop marker is empty", n))
	}
	return out
}

// writeRound writes the batch, accounts for it, and releases its ring space.
func (d *drainer) writeRound() {
	b := d.b
	done, off := 0, 0
	rest, restLen := d.restIndex()
	admitted := d.admit()
	if admitted && b.ring != nil {
		pre := 0
		if d.kinds[0] == kMarker {
			pre = len(d.views[0]) // a marker only ever opens a batch
		}
		b.ring.begin(d.pos, pre) // persisted before the write starts
	}
	// wmu: a producer writing through never calls the sink at the same time.
	// Taken as a call: a write-through holding it may be stuck in the output.
	// If Close gave up, the batch counts as failed (the loop's top counts
	// the rest) and wmu is not taken: a stuck write-through may hold it.
	if d.enterLock() {
		b.wmu.Lock()
		d.leaveCall()
		if b.wtErr.Load() != nil { // atomic: set by a failed write-through (reportWriteThrough)
			d.report("write", *b.wtErr.Swap(nil))
		}
		if admitted {
			done, off = d.write()
			if cap(d.staging) > maxStagingKeep {
				d.staging = nil // a batch of large (oversize) records: do not keep its copy's memory
			}
		}
		if done < len(d.views) {
			if done == rest {
				off += restLen // the record's first bytes went out on a write-through
			}
			if off > 0 {
				d.tear(off)
			}
		}
		b.wmu.Unlock()
	}
	var written, wbytes, failed, markers uint64
	for i, k := range d.kinds {
		switch {
		case k == kMarker:
			if i < done {
				markers++
			}
		case i < done:
			written++
			wbytes += uint64(len(d.views[i]))
		default:
			failed++
		}
	}
	// Single writer for these counters; Add is an uncontended atomic.
	b.written.Add(written)
	b.writtenBytes.Add(wbytes)
	b.failed.Add(failed)
	b.markers.Add(markers)
	if done > 0 {
		b.batches.Add(1)
	}
	d.woken = false
	d.progIdx = 0
	full := d.nrec >= d.target
	clear(d.views) // drop references to oversize records
	d.views, d.kinds, d.nrec = d.views[:0], d.kinds[:0], 0
	d.release()
	d.adapt(full)
}

// release zeroes the consumed space and publishes the new head.
func (d *drainer) release() {
	b := d.b
	if b.ring != nil {
		// The sink's write call has returned: only now may the file say so.
		// Persisted before the zeroing, which destroys the records.
		b.ring.written(d.pos)
	}
	if span := d.pos - d.head; span > 0 {
		lo, hi := d.head&b.mask, d.pos&b.mask
		switch {
		case span >= b.capacity:
			clear(b.mem)
		case lo < hi:
			clear(b.mem[lo:hi])
		default:
			clear(b.mem[lo:])
			clear(b.mem[:hi])
		}
		b.entries.Add(d.nent)
		b.entryBytes.Add(span)
	}
	d.nent = 0
	if b.ring != nil {
		// After the zeroing, before producers can see the new head: recovery
		// never scans beyond zeroed+capacity, i.e. into space that may still
		// hold consumed records.
		b.ring.zeroedTo(d.pos)
	}
	if d.ovBytes > 0 {
		b.oversizeBytes.Add(-d.ovBytes)
		d.ovBytes = 0
	}
	// Release store: the zeroing above happens-before the writes of any
	// producer that loads this head and reserves the space.
	b.head.Store(d.pos)
	d.head = d.pos
	// Sequentially consistent after the head store; see the park in Bus.full.
	if b.waiters.Load() > 0 {
		b.broadcastSpace()
	}
}

// restIndex returns the batch index of the rest of a record whose first
// bytes a write-through wrote (see Bus.wtRest), and how many bytes those
// were; -1 if the batch holds none. Such a rest is the batch's first entry:
// the write-through reserved at the drainer's head, and collect puts no
// marker in front of it.
func (d *drainer) restIndex() (int, int) {
	// Atomic loads after collect's acquire load of the rest's header, which
	// the producer stored after these (see writeThrough1).
	if len(d.kinds) > 0 && d.kinds[0] == kRecord && d.b.wtRest.Load() == d.head+1 {
		return 0, int(d.b.wtRestLen.Load())
	}
	return -1, 0
}

// adapt sets the next round's batch target from the backlog.
func (d *drainer) adapt(roundFull bool) {
	b := d.b
	depth := (b.tail.Load() &^ closedBit) - d.head
	t := d.target
	switch {
	case depth >= b.hwBytes:
		t = b.maxBatch // past the watermark: biggest batches at once
	case roundFull && depth > 0:
		t = min(2*t, b.maxBatch) // backlog keeps up with us: grow
	case depth == 0:
		t = max(t/2, b.minBatch) // caught up: shrink toward MinBatch
	}
	if t != d.target {
		d.target = t
		b.batchTarget.Store(uint64(t))
	}
}

// holdForProbe keeps the batch in the ring while the output is failing
// and its next probe is not due, as long as nothing needs the space: no
// Flush or Close waits, the ring is below its high watermark and no Block
// caller waits. It sleeps until the probe is due and returns true (collect
// again), so that records of a short outage are written by the probe rather
// than failed. Anything that wakes it (a producer past the watermark, a full
// ring, Flush, Close) lets the batch go at once: failed fast, or probed.
func (d *drainer) holdForProbe(urgent bool, t uint64) bool {
	b := d.b
	if d.health != failing || urgent || d.woken || (t&^closedBit)-d.head >= b.hwBytes || b.waiters.Load() > 0 {
		return false
	}
	wait := d.probeAt.Sub(d.now())
	if wait <= 0 {
		return false
	}
	// Sleeping state: producers wake us past the watermark, kick always.
	if d.idleWait(stSleeping, wait, d.readyWanted) != waitTimedOut {
		d.woken = true
	}
	return true
}

// admit decides whether this batch is written. It is not (the batch
// fails at once, counted as failed) after Close gave up, while the output
// is failing and the probe is not due, or when the bytes owed from an
// earlier torn record cannot be written. The owed bytes go out here, before
// the ring file records the sink's position for the batch.
func (d *drainer) admit() bool {
	b := d.b
	if chanClosed(b.abort) {
		return false
	}
	// Flush and Close probe at once: their callers wait for the write.
	if d.health == failing && (!d.now().Before(d.probeAt) || d.closing || len(d.reqs) > 0) {
		d.health = d.health.next(evProbeDue)
	}
	if d.health == failing {
		d.fastFails++
		d.report("write", d.lastErr) // rate-limited: counted as a suppressed repeat
		return false
	}
	probe := d.health == probing
	for attempts := 0; len(d.owed) > 0; {
		if !d.enterCall() {
			return false
		}
		n, err := sinkWrite(b.w, d.owed)
		d.leaveCall()
		b.writeCalls.Add(1)
		n = max(0, min(n, len(d.owed)))
		d.owed = d.owed[n:]
		if n > 0 {
			probe, d.health = false, d.health.next(evProgress) // the output works again
		}
		if len(d.owed) == 0 {
			d.health = d.health.next(evMended)
			b.owing.Store(false) // atomic: write-throughs may go again (see Bus.owing)
		}
		if err == nil {
			if n > 0 || len(d.owed) == 0 {
				continue
			}
			err = io.ErrShortWrite
		}
		attempts++
		if !d.failed(err, probe && n == 0, attempts) {
			return false
		}
	}
	return true
}

// failed handles a failed attempt: it reports err and, unless this was a
// probe or the last of the batch's attempts, backs off and returns true
// (try again). Otherwise the output is failing: it schedules the next probe
// and returns false.
func (d *drainer) failed(err error, probe bool, attempts int) bool {
	b := d.b
	d.lastErr = err
	d.report("write", err)
	d.failStreak = min(d.failStreak+1, maxFailShift)
	backoff := min(b.retryBase<<(d.failStreak-1), b.retryMax)
	if probe || attempts >= b.retries {
		d.health = d.health.next(evGiveUp)
		d.probeAt = d.now().Add(backoff)
		return false
	}
	if attempts >= DefaultWriteAttempts {
		// Config.WriteAttempts raised the budget: the batch is retried on,
		// but callers waiting for the output (Flush, Sync, a record written
		// before its Handle returns) wait no longer than the default budget
		// would have made them: they get the error now, and their records
		// stay queued for the remaining attempts.
		d.answerWaiting(err)
	}
	return d.sleepFor(backoff, false) // false: Close gave up
}

// answerWaiting answers every pending Flush, Sync and EnqueueWritten
// request while the batch that began at d.head is being retried. A request
// whose records are all below d.head (written before this batch) gets its
// usual answer (answerWritten). The others get err, marked as still
// retrying, with the failures since their mark; the "failures reported"
// mark does not move for them: if their records fail in the end, the next
// Flush and Close still report it.
//
// It runs inside a write round, where no write-through can reach the sink
// (the drainer holds wmu in write; admit runs while bytes are owed, when
// write-through is off), so the sink is synced without taking wmu.
func (d *drainer) answerWaiting(err error) {
	d.takeFlushes()
	d.answerWritten(d.head, true)
	failed := d.b.failed.Load()
	for _, r := range d.reqs {
		r.ch <- &SinkError{Op: "write", Output: d.b.output, Err: err, Failed: failed - r.failedAt, Retrying: true}
	}
	clear(d.reqs)
	d.reqs = d.reqs[:0]
}

// write hands the batch to the sink, completing short writes and retrying
// failures with exponential back-off. It returns how many leading views were
// written completely (the rest count as failed) and how many bytes of the
// next one are in the output. While the output is failing (see
// drainer.health) the first attempt is a probe: if it makes no progress,
// the batch fails at once.
func (d *drainer) write() (int, int) {
	b := d.b
	if b.sink == sinkCopy {
		d.stage()
	}
	idx, off, attempts := 0, 0, 0
	probe := d.health == probing
	for idx < len(d.views) {
		d.progIdx = idx
		if !d.enterCall() {
			break // Close gave up: what is left counts as failed
		}
		nidx, noff, err := d.step(idx, off)
		d.leaveCall()
		progressed := nidx > idx || noff > off
		idx, off = nidx, noff
		if progressed {
			probe, d.health = false, d.health.next(evProgress) // the output works again
		}
		if err == nil {
			if progressed || idx >= len(d.views) {
				d.failStreak = 0
				continue
			}
			err = io.ErrShortWrite // no progress and no error: never loop on it
		}
		if idx >= len(d.views) || progressed {
			// Everything was taken, with an error (a batch writer whose
			// failed records are not retried, such as otlpsink's refused
			// drop marker): report it, with no back-off for nothing left.
			// Or part was taken (a net.Conn's write deadline): go on at
			// once, so that a record is never torn while the output
			// makes progress; only attempts that write nothing count.
			d.lastErr = err
			d.report("write", err)
			continue
		}
		attempts++
		if !d.failed(err, probe, attempts) {
			break
		}
	}
	return idx, off
}

// tear handles a batch given up on with the first off bytes of a record in
// the output. That record counts as failed, and the next record must not be
// glued to its fragment: a regular *os.File whose end is still our
// fragment's end is cut back to the record's start; anything else owes a
// newline, written before the next record (see admit).
func (d *drainer) tear(off int) {
	err := errNotCut
	if d.enterCall() {
		err = cutBack(d.b.w, int64(off))
		d.leaveCall()
	}
	if err != nil {
		if err != errNotCut {
			d.report("truncate", err)
		}
		d.owed = append(d.owed[:0], '\n')
		d.health = d.health.next(evTear)
		// Before release publishes head past this batch (seq-cst): a
		// producer that then finds the ring empty sees it (see Bus.owing).
		d.b.owing.Store(true)
	}
}

var errNotCut = errors.New("not a regular file whose end is this record's fragment")

// cutBack removes the last n bytes of w, the fragment of a record whose
// write failed part-way, if w is a regular *os.File whose size equals our
// file offset (so the fragment is still the file's end: with O_APPEND and
// other writers, another process may have appended after it, and then
// nothing is cut). It then moves the offset back, so that a file opened
// without O_APPEND does not get a hole. A writer appending between the
// size check and the truncate would lose its bytes: files shared with
// other writers should not fail part-way through a record.
func cutBack(w io.Writer, n int64) error {
	f, ok := w.(*os.File)
	if !ok {
		return errNotCut
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errNotCut
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if pos != fi.Size() || pos < n {
		return errNotCut
	}
	if err := f.Truncate(pos - n); err != nil {
		return err
	}
	_, err = f.Seek(pos-n, io.SeekStart)
	return err
}

// step makes one call into the sink from record idx, byte off.
func (d *drainer) step(idx, off int) (int, int, error) {
	b := d.b
	switch b.sink {
	case sinkBatch:
		n, err := sinkWriteBatch(b.w.(BatchWriter), d.views[idx:])
		b.writeCalls.Add(1)
		n = max(0, min(n, len(d.views)-idx))
		return idx + n, 0, err
	case sinkWritev:
		return d.wv.step(d, idx, off)
	}
	start := off
	if idx > 0 {
		start += d.ends[idx-1]
	}
	if start >= len(d.staging) {
		return len(d.views), 0, nil // only empty records remain
	}
	n, err := sinkWrite(b.w, d.staging[start:])
	b.writeCalls.Add(1)
	n = max(0, min(n, len(d.staging)-start))
	idx, off = advance(d.ends, idx, start+n)
	return idx, off, err
}

// advance converts a byte position in the concatenated batch into (record,
// offset within it), skipping records that are complete (including empty ones).
func advance(ends []int, idx, pos int) (int, int) {
	for idx < len(ends) && ends[idx] <= pos {
		idx++
	}
	switch idx {
	case 0:
		return 0, pos
	case len(ends):
		return idx, 0
	}
	return idx, pos - ends[idx-1]
}

// stage copies the batch into the reusable staging buffer.
func (d *drainer) stage() {
	d.staging, d.ends = d.staging[:0], d.ends[:0]
	for _, v := range d.views {
		d.staging = append(d.staging, v...)
		d.ends = append(d.ends, len(d.staging))
	}
}

// idle backs off: sleeps of 50 µs doubling up to MaxLatency/2, one sleep at
// the cap, then park.
func (d *drainer) idle() {
	b := d.b
	d.gather, d.gatherFor = true, b.maxLatency/2
	limit := max(b.maxLatency/2, time.Microsecond)
	if d.sleep < limit || !d.sleptAtCap {
		s := min(d.sleep, limit)
		if s == limit {
			d.sleptAtCap = true
		}
		d.sleepFor(s, true)
		d.sleep = min(2*d.sleep, limit)
		return
	}
	d.park()
	d.sleep, d.sleptAtCap = idleSleepMin, false
}

// waitUncommitted waits, for a Flush or Close, for the reservation at pos,
// not committed yet. Usually its producer is between its CAS and its header
// store, a few instructions away: yield to it. A producer writing through
// holds wmu (whose only other user is this goroutine) and may stay in the
// sink's Write for long, or for ever on a hung output: park in stWaitWT
// until it is done rather than spin. It returns false if Close gave up
// while a write-through was still in the sink: the drainer stops waiting.
func (d *drainer) waitUncommitted() bool {
	b := d.b
	if b.wmu.TryLock() {
		b.wmu.Unlock()
		d.yields++
		runtime.Gosched()
		return true
	}
	if chanClosed(b.abort) {
		return false
	}
	// The write-through's producer stores wtHead (writeThrough1) or commits
	// at pos (wakeAfterCommit, with head == pos), then loads state and
	// wakes us (see idleWait's proof); Flush and Close kick.
	d.idleWait(stWaitWT, 0, d.readyCommitted)
	return true
}

// wanted reports whether a Flush, Sync or Close wants the drainer now.
// Block callers waiting for space are not counted: a full ring is past the
// high watermark, where every commit wakes a sleeping drainer, and a ring
// that is full of reservations not committed yet is no work the drainer
// could do (counting them made an idle drainer spin until the commit).
func (d *drainer) wanted() bool {
	b := d.b
	return b.flushPending.Load() || b.tail.Load()&closedBit != 0
}

func (d *drainer) hasWork() bool {
	b := d.b
	return d.committedAtPos() ||
		b.flushPending.Load() ||
		b.tail.Load()&closedBit != 0 ||
		b.gapPos.Load() <= d.pos
}

func (d *drainer) takeFlushes() {
	b := d.b
	b.flushPending.Store(false) // before taking the list: a later append sets it again
	b.mu.Lock()
	reqs := b.flushReqs
	b.flushReqs = d.spareReqs[:0] // the list's two arrays alternate: appends allocate nothing
	b.mu.Unlock()
	for _, r := range reqs {
		d.reqs = append(d.reqs, pendingFlush{flushReq: r, failedAt: d.failedAnswered})
	}
	clear(reqs) // drop the channels
	d.spareReqs = reqs[:0]
}

// answerFlushes syncs once and answers every Flush whose target is written.
func (d *drainer) answerFlushes() { d.answerWritten(d.pos, false) }

// answerWritten answers every request whose target is at or below upTo
// (written), after one sync if any of them asks for it; excluded says the
// caller already keeps write-throughs from the sink (see answerWaiting), so
// the sync must not take wmu.
func (d *drainer) answerWritten(upTo uint64, excluded bool) {
	if len(d.reqs) == 0 {
		return
	}
	ready := false
	for _, r := range d.reqs {
		if r.target <= upTo {
			ready = true
			break
		}
	}
	if !ready {
		return
	}
	needSync, mark := false, false
	for _, r := range d.reqs {
		needSync = needSync || (r.sync && r.target <= upTo)
		mark = mark || (r.mark && r.target <= upTo)
	}
	var syncErr error
	switch {
	case !needSync: // EnqueueWritten asks for the write only
	case excluded:
		syncErr = d.syncSinkExcluded()
	default:
		syncErr = d.sync()
	}
	failed := d.b.failed.Load()
	keep := d.reqs[:0]
	for _, r := range d.reqs {
		if r.target > upTo {
			keep = append(keep, r)
			continue
		}
		r.ch <- d.result(syncErr, failed-r.failedAt)
	}
	if mark {
		// Only a Flush answer moves the mark: a failure is then still
		// reported to the next Flush (and to Close) after EnqueueWritten
		// and Sync calls.
		d.failedAnswered = failed
	}
	clear(d.reqs[len(keep):])
	d.reqs = keep
}

func (d *drainer) result(syncErr error, failed uint64) error {
	switch {
	case failed > 0:
		err := d.lastErr
		if err == nil {
			err = errAborted
		}
		return &SinkError{Op: "write", Output: d.b.output, Err: err, Failed: failed}
	case syncErr != nil:
		return &SinkError{Op: "sync", Output: d.b.output, Err: syncErr}
	}
	return nil
}

var errAborted = &abortError{}

type abortError struct{}

func (*abortError) Error() string { return "close deadline expired before the records were written" }

func (d *drainer) sync() error {
	if _, ok := d.b.w.(Syncer); !ok || chanClosed(d.b.abort) {
		// Checked before taking wmu: after Close gave up, a hung
		// write-through may hold wmu for ever, and the drainer must still
		// finish (TestCloseGivesUpOnHungWriteThrough).
		return nil
	}
	// No write-through during the sync: a sink need not allow both at
	// once. Taken as a call: a write-through holding it may be stuck.
	if !d.enterLock() {
		return nil
	}
	d.b.wmu.Lock()
	d.leaveCall()
	defer d.b.wmu.Unlock()
	return d.syncSinkExcluded()
}

// syncSinkExcluded syncs the sink for a caller that already keeps
// write-throughs away from it (holding wmu, or while bytes are owed).
func (d *drainer) syncSinkExcluded() error {
	s, ok := d.b.w.(Syncer)
	if !ok || chanClosed(d.b.abort) {
		return nil
	}
	if !d.enterCall() {
		return nil
	}
	err := sinkSync(s)
	d.leaveCall()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		return nil // pipes, terminals, sockets: nothing to make durable
	}
	if err != nil {
		d.report("sync", err)
	}
	return err
}

// finish runs once the ring is drained after Close.
func (d *drainer) finish() {
	b := d.b
	if n := b.takeGaps(math.MaxUint64, true); n > 0 {
		// Drops registered at the very end (a Drop racing with Close).
		d.addMarker(n)
		d.writeRound()
	}
	syncErr := d.sync()
	failed := b.failed.Load()
	for _, r := range d.reqs {
		r.ch <- d.result(syncErr, failed-r.failedAt)
	}
	d.reqs = nil
	b.closeErr = d.result(syncErr, failed-d.closeFail)
	d.timer.Stop()
	close(b.stopped) // after closeErr: waiters read it once they see stopped
}

// Report passes err to OnError through the bus's reporter: the goroutine
// that delivers the bus's own reports, one at a time, and that Close waits
// for. It is for a sink's own reports (retries, partial successes); a full
// queue counts the report as lost, as for the bus's own. It returns false,
// taking nothing, before the drainer has started (a ring file's replay)
// and once the bus has closed (the sink used on by itself): the caller then
// delivers the report itself.
func (b *Bus) Report(err error) bool { return b.rep.send(err) }

// report passes err to OnError at most about once a second per distinct
// situation (operation and error text), carrying the count of suppressed
// repeats. It never blocks: the callback runs on the reporter goroutine.
func (d *drainer) report(op string, err error) {
	b := d.b
	if b.onError == nil {
		return
	}
	key := op + "\x00" + err.Error()
	now := d.now()
	e := d.limiter[key]
	if e == nil {
		if len(d.limiter) >= 64 {
			clear(d.limiter) // bounded memory for ever-changing error texts
		}
		e = &limitState{}
		d.limiter[key] = e
	} else if now.Sub(e.last) < time.Second {
		e.suppressed++
		return
	}
	e.last = now
	s := e.suppressed
	e.suppressed = 0
	b.rep.send(&SinkError{Op: op, Output: b.output, Err: err, Suppressed: s})
}

// reportQueue is how many reports may wait for a slow OnError. The
// drainer's reports are rate-limited per situation, so the queue fills
// only when OnError blocks (logging through a full Block-mode ring, say).
const reportQueue = 64

// reporter runs OnError on its own goroutine, so that a callback that logs
// through the same bus, or calls Flush or Close, cannot make the drainer
// wait for itself. The drainer hands it reports through a bounded queue and
// never blocks: when the queue is full the report is counted in lost, and
// the count is delivered as a report of its own.
type reporter struct {
	onError func(error)
	// queue takes the reports: the drainer's, and a sink's (Bus.Report).
	// mu orders every send before the close in stop, and stopped refuses
	// sends after it (a sink used on after its handler closed).
	queue   chan error
	mu      sync.Mutex
	stopped bool
	done    chan struct{} // closed when every queued report has been delivered
	lost    atomic.Uint64 // reports refused by a full queue, not yet told to OnError
}

func (r *reporter) init(onError func(error)) {
	r.onError = onError
	r.done = make(chan struct{})
	if onError == nil {
		close(r.done)
		return
	}
	r.queue = make(chan error, reportQueue)
	go r.loop()
}

// send queues err without blocking. It reports false once the reporter
// has stopped or before it started (the report is then not taken); a full
// queue counts the report as lost and still returns true.
func (r *reporter) send(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.done == nil {
		return false
	}
	select {
	case r.queue <- err:
	default:
		r.lost.Add(1) // atomic: the reporter goroutine swaps it
	}
	return true
}

// stop closes the queue (the drainer when it exits, or a Close that gave
// up during the drainer's call into the output; the second call does nothing): the reporter
// delivers what is queued and exits; later sends are refused.
func (r *reporter) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return // a Close that gave up stopped it first (giveup.go)
	}
	r.stopped = true
	if r.queue != nil {
		close(r.queue)
	}
}

func (r *reporter) loop() {
	defer close(r.done)
	for err := range r.queue {
		r.call(err)
		r.tellLost() // after err: the lost reports came after it
	}
}

func (r *reporter) tellLost() {
	// Swap: every lost report is told exactly once, even with send racing.
	if n := r.lost.Swap(0); n > 0 {
		r.call(fmt.Errorf("asyncbus: %d error reports lost: OnError was too slow to take them", n))
	}
}

// call runs the callback. A panic in it must not kill the reporter (later
// reports, and Close waiting for them, depend on it).
func (r *reporter) call(err error) {
	defer func() { _ = recover() }()
	r.onError(err)
}

// reporterCall is the function name inCallback looks for on the stack.
const reporterCall = "github.com/asyncbus/asyncbus/internal/bus.(*reporter).call"

// inCallback reports whether the calling goroutine is running an OnError
// callback (of any bus): Close called from OnError must not wait for the
// reporter, which is waiting for it. Only Close pays for this stack walk.
// It walks the whole stack, however deep the callback called Close.
func inCallback() bool {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(2, pcs)
	for n == len(pcs) { // maybe truncated: grow until the whole stack fits
		pcs = make([]uintptr, 2*len(pcs))
		n = runtime.Callers(2, pcs)
	}
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == reporterCall {
			return true
		}
		if !more {
			return false
		}
	}
}

// closed is Close's end once the drainer has exited: it waits until every
// report has reached OnError, unless Close was called from OnError.
func (b *Bus) closed(ctx context.Context) error {
	if inCallback() {
		return b.closeErr
	}
	select {
	case <-b.rep.done:
		return b.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
