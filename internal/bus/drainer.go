package bus

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/queuedelay"
	"github.com/asyncbus/asyncbus/internal/writeback"
	"github.com/asyncbus/asyncbus/internal/writev"
)

// maxFailShift caps the back-off's doubling (retryBase<<shift): past it
// the shift would overflow, and RetryMax caps the back-off long before.
const maxFailShift = 30

// drainer is the state private to the drainer goroutine (no synchronisation).
type drainer struct {
	b     *Bus
	head  uint64 // == b.head, kept locally (the drainer is its only writer)
	pos   uint64 // scan position: end of the entries collected so far
	views [][]byte
	kinds []viewKind
	nrec  int  // ring records (inline + oversize) in views
	bytes int  // record bytes in views (the batch's byte cap, batchCap)
	full  bool // collect stopped at a cap or a gap, not at the queue's end: more is committed

	busyBytes uint64 // the output rate's sample so far (measure): bytes written
	busyNs    int64  // and the time their calls took
	callMin   int64  // the least time a call took in this sample (measure), 0 before one
	quietTAT  int64  // the count of the program's records (countRecords): GCRA's arrival time
	lastRate  uint64 // the last sample's rate, 0 before one (measure)
	batchRate uint64 // the samples' weighted mean, which sizes batches (batchCap)
	nent      uint64 // ring entries (including padding) between head and pos
	ovBytes   int64  // oversize bytes in views

	// gather is set after an idle sleep and after a round of fewer than
	// minBatch records: the next batch, if small, waits up to gatherFor for
	// more (see run).
	gather     bool
	gatherFor  time.Duration
	lastGather time.Duration // the last gather wait decided on, 0 for none (tests read it after Close)
	now        func() time.Time

	failStreak int
	lastErr    error
	// down: a batch spent its attempts (or a probe took nothing). Until
	// a call makes progress, later batches fail at once without a call
	// into the output, or wait in the ring, until probeAt; the first
	// batch after probeAt, or one a Flush or Close waits for, makes one
	// attempt (probing). So a dead output costs callers nothing while it
	// is probed with back-off. A fragment owed (owed, below) goes out
	// before anything else, whatever the state.
	down      bool
	probing   bool
	failing   bool // the last call into the output failed: published in Bus.failing
	probeAt   time.Time
	fastFails uint64 // batches failed without a call while failing (tests read it after Close)
	woken     bool   // a hold was cut short: the batch is wanted now (cleared by writeRound)
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

	staging []byte           // outputCopy's buffer, sized once (init)
	wb      *writeback.Pacer // a regular file's write-back, started every ring of bytes: a sync has about that to write at most (nil: none)
	out     []byte           // the batch as one Write takes it: staging, or one large record (stage)
	ends    []int
	marker  []byte
	wv      *writev.Writer // outputWritev's (outputKindOf)

	// progIdx is how many leading views of the batch in hand are written:
	// set before each call into the output, for a Close that gives up
	// during the call (giveup.go); 0 between rounds.
	progIdx int
	// The reasons idleWait looks for, bound once (no closure per wait).
	readyWanted, readyHasWork func() bool
	// seqMarker is the numbered copy of marker (Config.Sequence,
	// seq.go); qd is the queue's delay (an optional stage, queuedelay).
	seqMarker []byte
	seqMarkN  uint64 // the count of the marker seqMarker numbered (ringseq.go)
	qd        queuedelay.Delay
}

func (d *drainer) init(b *Bus) {
	d.b = b
	d.views = make([][]byte, 0, b.maxBatch+1)
	d.kinds = make([]viewKind, 0, b.maxBatch+1)
	d.now = time.Now
	d.readyWanted, d.readyHasWork = d.wanted, d.hasWork
	d.limiter = make(map[string]*limitState)
	if b.kind == outputCopy {
		// Sized once: a batch carries at most cacheBatch record bytes,
		// or one record alone (written from its own memory, see stage);
		// a page more for the drop marker that may open it.
		d.staging = make([]byte, 0, cacheBatch+4<<10)
		d.wb = writeback.New(b.w, b.capacity)
	}
	b.rep.Init(b.onError)
}

// run is the drainer goroutine.
func (b *Bus) run() {
	d := &b.d
	// The drainer is an ordinary goroutine between calls into the output
	// (a caller's wake-up hands it the caller's processor, no OS thread
	// switch); during a call it keeps its OS thread (enterCall).
	defer close(b.done)
	if b.mapped != nil {
		// Runs before done is closed, after every other use of the ring:
		// every reservation below the final tail was committed and
		// consumed, and Enqueue after Close never touches the ring.
		defer b.mapped.release()
	}
	// Runs before done is closed: the drainer is the reports' only sender,
	// and finish has queued its last one.
	defer b.rep.Stop()
	if b.file != nil {
		// Runs before done is closed: every reservation below the final tail
		// was committed and consumed, and Enqueue after Close never touches the
		// ring, so nothing uses the mapping any more.
		defer b.file.Close()
	}
	for {
		if b.aborted.Load() { // atomic, row aborted: a Close gave up (giveUp)
			d.abandon()
			return
		}
		if b.flushPending.Load() { // atomic, row flushPending
			d.takeFlushes()
		}
		t := b.tail.Load()                       // atomic, row tail
		d.qd.Observe(t&^closedBit, b.nanotime()) // the queue's delay (the queuedelay stage)
		if t&closedBit != 0 && !d.closing {
			d.closing = true
		}
		urgent := d.closing || len(d.reqs) > 0
		if depth := (t &^ closedBit) - d.head; depth > b.highWater.Load() { // atomic, row highWater
			atomicMax(&b.highWater, depth) // atomic, row highWater
		}
		d.collect()
		if len(d.views) > 0 {
			d.handleBatch(urgent, t)
			continue
		}
		d.gather = false
		d.answerWritten(d.pos)
		if d.closing && d.pos >= t&^closedBit {
			d.finish()
			return
		}
		if d.closing || len(d.reqs) > 0 {
			// Close, or a Flush, waits for a reservation not committed
			// yet (below the final tail, or a Flush's target): its
			// producer is between its CAS and its header store, a few
			// instructions away: yield to it. A Close that gives up
			// meanwhile is seen at the loop's top.
			runtime.Gosched()
			continue
		}
		d.idle()
	}
}

// handleBatch decides what to do with the batch collected (batchAction) and
// does it: gather more, hold it until the probe, or write it (or fail it
// fast) and answer the Flushes it completes. t is the round's tail.
func (d *drainer) handleBatch(urgent bool, t uint64) {
	b := d.b
	act := d.batchAction(urgent, t)
	if act == actGather {
		// Light or moderate load: wait for a worthwhile batch, within
		// MaxLatency (docs/design.md, Batching). Flush, Close, a full
		// ring and the wake backlog cut the wait short.
		d.lastGather = max(d.gatherFor, 0)
		if d.gatherFor > 0 {
			d.sleepFor(d.gatherFor, true)
			d.collect()
		}
		d.gather = false
		act = d.batchAction(urgent, t)
	}
	d.gather = false
	if act == actHold {
		d.hold()
		return
	}
	// A small round that nothing urgent asked for: gather the next, for
	// what is left of MaxLatency once this round's write is done.
	small := d.small() && !urgent
	var start time.Time
	if small {
		start = d.now()
	}
	d.writeRound(act)
	if small {
		d.gather = true
		d.gatherFor = min(b.maxLatency/2, b.maxLatency-d.now().Sub(start))
	}
	b.slept = false
	d.answerWritten(d.pos)
}

// collect appends committed entries from d.pos to the batch, up to
// maxBatch records and the batch's byte cap (batchCap; a record that would
// pass it waits for the next batch, unless the batch is empty), stopping
// at the first uncommitted entry or at a drop gap.
func (d *drainer) collect() {
	b := d.b
	limit := d.batchCap()
	d.full = true // until the loop reaches the queue's end
	for d.nrec < b.maxBatch && d.bytes < limit {
		if g := b.gapPos.Load(); g <= d.pos { // atomic, row gapPos
			if len(d.views) > 0 {
				return // cut the batch at the gap; the marker opens the next one
			}
			if n := b.takeGaps(d.pos, false); n > 0 {
				d.addMarker(n) // the (empty) batch opens with the gap's marker
			}
		}
		if d.pos-d.head >= b.capacity {
			return // the whole ring is in this batch: the word at pos is our own first header
		}
		off := b.offsetOf(d.pos)
		// Acquire load: pairs with the producer's release store of the header,
		// so the payload (or the side-table entry) is visible once we see
		// flagCommit. Consumed space is zeroed, so no stale word can match.
		h := atomic.LoadUint64(b.hdr(off)) // atomic, row header word
		if h&flagCommit == 0 {
			d.full = false
			return
		}
		switch {
		case h&flagPadding != 0:
			d.nent++
			d.pos += h & lenMask
			continue
		case h&flagOversize != 0:
			b.mu.Lock()
			rec := b.side[d.pos]
			if d.nrec > 0 && d.bytes+len(rec) > limit {
				b.mu.Unlock()
				return
			}
			delete(b.side, d.pos)
			b.mu.Unlock()
			if b.seq.On() { // the side table's copy is ours to number (seq.go)
				rec = b.seq.Number(rec)
			}
			d.views = append(d.views, rec)
			d.kinds = append(d.kinds, kOversize)
			d.ovBytes += int64(len(rec))
			d.bytes += len(rec)
			d.pos += hdrSize
		default:
			n := h & lenMask
			if d.nrec > 0 && d.bytes+int(n) > limit {
				return
			}
			start, end := off+hdrSize, off+hdrSize+ringOff(n)
			view := b.mem[start:end:end]
			if b.seq.On() { // numbered in ring order (seq.go)
				view = b.seq.Number(view)
			}
			d.views = append(d.views, view)
			d.kinds = append(d.kinds, kRecord)
			d.bytes += int(n)
			d.pos += align8(hdrSize + n)
		}
		d.nent++
		d.nrec++
	}
}

// small reports whether the batch in hand is worth gathering more for:
// fewer than minBatch records, and not cut at a cap (docs/design.md).
func (d *drainer) small() bool { return d.nrec < d.b.minBatch && !d.full }

// idle waits for work: one sleep of MaxLatency/2 after work (the wake
// backlog, Flush, Sync and Close cut it short), then a park; at once a park
// while quiet waits are on and the program is quiet (its next record wakes it).
func (d *drainer) idle() {
	b := d.b
	d.gather, d.gatherFor = true, b.maxLatency/2
	if !b.slept && !(b.quietWaits && b.quiet()) {
		b.slept = true
		d.sleepFor(max(b.maxLatency/2, time.Microsecond), true)
		return
	}
	d.park()
	d.qd.Woke(b.nanotime()) // the queue's delay (the queuedelay stage)
	b.slept = false
}

// wanted reports whether a Flush, Sync or Close wants the drainer now.
// Block callers waiting for space are not counted: a full ring is past the
// wake backlog, where every commit wakes a sleeping drainer, and a ring
// that is full of reservations not committed yet is no work the drainer
// could do.
func (d *drainer) wanted() bool {
	b := d.b
	return b.flushPending.Load() || b.tail.Load()&closedBit != 0 // atomic, rows flushPending, tail
}

func (d *drainer) hasWork() bool {
	b := d.b
	return d.committedAtPos() ||
		b.flushPending.Load() || // atomic, row flushPending
		b.tail.Load()&closedBit != 0 || // atomic, row tail
		b.gapPos.Load() <= d.pos // atomic, row gapPos
}
