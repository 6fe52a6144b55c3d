package bus

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

var (
	// ErrClosed is returned by Enqueue after Close (counted as dropped, and in
	// Stats.DroppedClosed).
	ErrClosed = errors.New("bus closed")
	// ErrDropped is returned in Drop mode when the ring is full, or in Block
	// mode when Config.BlockTimeout expired; the record is counted as dropped.
	ErrDropped = errors.New("ring full, record dropped")
)

// Header word layout (see the package documentation).
const (
	hdrSize      = 8
	flagCommit   = uint64(1) << 63
	flagPadding  = uint64(1) << 62
	flagOversize = uint64(1) << 61
	lenMask      = uint64(1)<<32 - 1
	maxInline    = 1 << 30 // MaxRecord upper bound, keeps lengths well inside 32 bits

	// closedBit is set in the tail cursor by Close: a reservation is a CAS on
	// tail, so once the bit is set no reservation can succeed, and every
	// reservation that did succeed is below the final tail the drainer drains to.
	closedBit = uint64(1) << 63
)

// Drainer states, in Bus.state.
const (
	stRunning  = 0
	stSleeping = 1 // bounded sleep (<= MaxLatency/2); producers wake it only past the high watermark
	stParked   = 2 // unbounded wait; the first producer that commits wakes it
	// stWaitWT: unbounded wait for a Flush or Close behind a write-through
	// still in the sink (see drainer.waitUncommitted); like stParked, and the
	// producer that ends the write-through also wakes it (tryWriteThrough).
	stWaitWT = 3
)

// cacheLine is the padding unit between groups of fields written by different
// goroutines. 128 rather than 64: x86's adjacent-line prefetcher pulls lines in
// 128-byte pairs, and Apple/ARM big cores use 128-byte lines.
const cacheLine = 128

type pad [cacheLine]byte

// Bus is the asynchronous record bus: many goroutines call Enqueue, one
// drainer goroutine writes to the sink. All methods are safe for concurrent
// use.
type Bus struct {
	// Read-only after New; shared by all goroutines without synchronisation.
	w            io.Writer
	mem          []byte
	base         unsafe.Pointer // &mem[0], 8-byte aligned (checked in New)
	capacity     uint64
	mask         uint64
	maxRecord    int
	hwBytes      uint64
	overflow     Overflow
	blockTimeout time.Duration
	maxLatency   time.Duration
	minBatch     int
	maxBatch     int
	onError      func(error)
	dropMarker   func([]byte, uint64) []byte
	wakeCh       chan struct{} // capacity 1: a wake-up token is never lost and never blocks the sender
	done         chan struct{} // closed when the drainer goroutine has returned
	abort        chan struct{} // closed when a Close ctx expired: give up on the remaining records
	retryBase    time.Duration
	retryMax     time.Duration
	retries      int    // attempts per batch before its remaining records count as failed
	output       string // the output's name in error reports (see outputName)
	sink         sinkKind
	ring         *ringFile     // non-nil for a file-backed ring: producers add checksums, the drainer persists its cursors
	recovered    uint64        // Stats.Recovered, set before the drainer starts
	unrecovered  uint64        // Stats.Unrecovered, likewise
	writeThrough bool          // Config.WriteThrough, without a ring file
	epoch        time.Time     // monotonic origin of the bus's clock (nanotime, the rate limits)
	yieldShift   uint          // see maxYieldShift
	direct       directCheck   // which write-throughs cannot block for long (see directWriter); nil: none
	slowCall     int64         // the breaker's bounds in ns (callerwait.go): SlowCall or SlowDirectCall,
	verySlowCall int64         // VerySlowCall or none (MaxInt64),
	inFlightSlow int64         // and VerySlowCall or StuckDirectCall
	quietAfter   int64         // QuietAfter in ns (< 0: always quiet, tests)
	stopped      chan struct{} // closed once the books are final: every record written or counted, every waiter answered

	_ pad
	// tail is the producers' reservation cursor (byte position, never wraps;
	// bit 63 = closed). It is the one contended write of the producer path and
	// has its cache line to itself.
	tail atomic.Uint64
	_    pad
	// head is written by the drainer once per round, wtHead by a producer
	// after each write-through (rare when the logger is busy); every
	// producer reads both, before the reservation and after the commit, so
	// they share one read-mostly line.
	head atomic.Uint64 // everything below head is consumed and zeroed
	// wtHead is the end of the last written-through reservation: everything
	// below it is in the output. Only the drainer moves head, after adopting
	// wtHead (drainer.adoptHead), so producers never reserve the memory at a
	// position the drainer may still read (its stale read position is >= head).
	wtHead atomic.Uint64
	// lineLen is how many Block producers are in line for room (Bus.line):
	// every producer loads it before reserving, and it is stored only
	// when the ring was full, so it shares head's read-mostly line.
	lineLen atomic.Int32
	_       pad
	// state is written by the drainer on every idle transition (sleep, park,
	// wake) and by waking producers. It has its own line so that those
	// transitions do not invalidate head's line, and producers load it only
	// when they may have to wake the drainer: when the drainer has consumed
	// everything before their record (head >= their reservation), or past
	// the high watermark. See Enqueue.
	state atomic.Uint32 // stRunning / stSleeping / stParked / stWaitWT
	_     pad
	// Write-through state. wmu is held by the drainer while it calls the
	// sink (writes and syncs) and tried (never waited for) by a producer
	// that writes through; the other fields are used only by the producer
	// whose reservation started at head == tail, and those producers are
	// serialized by that condition (see writeThrough), so they need no lock.
	wmu     sync.Mutex
	wtLimit rateLimit             // the write-through rate limit (its CAS is uncontended: see tryWriteThrough)
	wtErr   atomic.Pointer[error] // the last write-through error the drainer has not reported yet
	wtOne   [][]byte              // len 1: the record handed to a BatchWriter
	wtCount atomic.Uint64         // Stats.WriteThrough (atomic: Stats reads it)
	// wtRest is 1 + the ring position where a write-through that the sink
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
	_       pad
	// The breaker (callerwait.go). callSince is when the call into the
	// output in flight began (ns, Bus.nanotime), 0 if none; speed is how
	// fast the last one was. Written once per call by whoever calls (the
	// drainer or a write-through), read by producers deciding whether to
	// write through or wait: their own line, off the producers' hot lines.
	callSince atomic.Int64
	speed     atomic.Uint32
	// lastCallEnd is when the last call into the output returned (ns,
	// Bus.nanotime; 0 before the first): the handler is quiet once it is
	// QuietAfter old and no call is in flight (Bus.quiet).
	lastCallEnd atomic.Int64
	_           pad
	// qwLimit is the quiet wait's rate limit, updated by CAS from any
	// producer that found a short queue (see quietAllow). Its own line: at
	// high rates it is read (not written: the limit is spent) by the few
	// records per drainer round that find a short queue, and it must not
	// make tail's or head's line bounce when it is written.
	qwLimit rateLimit
	_       pad
	// Slow-path shared counters: written only on drops, oversize records,
	// blocking and wake-ups, never on the fast path.
	dropped       atomic.Uint64
	droppedClosed atomic.Uint64
	gapPos        atomic.Uint64 // lowest pending gap position (see drop); MaxUint64 = none
	oversize      atomic.Uint64
	oversizeBytes atomic.Int64 // heap bytes of oversize records not yet written
	waiters       atomic.Int32 // producers parked in Block mode
	wakeups       atomic.Uint64
	flushPending  atomic.Bool
	_             pad
	// Drainer-written statistics (single writer, read by Stats).
	written      atomic.Uint64
	writtenBytes atomic.Uint64
	failed       atomic.Uint64
	batches      atomic.Uint64
	writeCalls   atomic.Uint64
	markers      atomic.Uint64
	highWater    atomic.Uint64
	outRate      atomic.Uint64 // the output's bytes per second while written to (outrate.go); 0 until measured
	batchTarget  atomic.Uint64
	parks        atomic.Uint64
	entries      atomic.Uint64 // ring entries consumed (records, refs, padding)
	entryBytes   atomic.Uint64 // ring bytes consumed
	_            pad

	dropMu sync.Mutex // guards gaps
	gaps   []gap      // pending drop gaps by ring position, ascending
	// gapsFinal is set, under dropMu, by the drainer's last takeGaps: a
	// drop registered after it could never get its marker, so it counts as
	// refused after Close instead.
	gapsFinal bool

	mu        sync.Mutex    // guards spaceCh, flushReqs, side, line
	line      []*roomWaiter // Block producers waiting for room, in arrival order (roomline.go)
	spaceCh   chan struct{} // closed (and replaced) by the drainer to wake parked Block producers
	flushReqs []flushReq
	side      map[uint64][]byte // oversize records by ring position

	closeOnce sync.Once
	abortOnce sync.Once
	closeErr  error // set before stopped is closed, by the drainer or by a Close that gave up
	// aborted is set (with abort closed) when a Close gave up; call is the
	// drainer's call state (callNone, callOut, callAbandoned; giveup.go);
	// final is set once the books are final after a give-up, when records
	// left in the ring are counted as failed rather than queued.
	aborted atomic.Bool
	// abortCause (the context's error) and stuckFor (how long the call
	// into the output in flight had run) are set by giveUp before aborted,
	// for the GiveUpError.
	abortCause error
	stuckFor   time.Duration
	call       atomic.Uint32
	final      atomic.Bool
	rep        reporter // runs OnError off the drainer (drainer.go)

	d drainer // drainer-private state

	// seq numbers records (Config.Sequence, seq.go; issue 39): used by the
	// drainer and by a write-through's producer, whoever owns the ring's
	// order. Both already write the write-through state's lines; a record
	// in the ring never touches it on the producer's side.
	seq seqState
}

// ringOff is an offset into the ring's memory, in [0, capacity). Ring
// positions (tail, head, reservations) are plain uint64 byte counts that
// never wrap; a position's offset is the position modulo the capacity.
type ringOff uint64

// offsetOf returns the offset in the ring's memory of position pos.
func (b *Bus) offsetOf(pos uint64) ringOff { return ringOff(pos & b.mask) }

// hdr returns the header word at ring offset off (a multiple of 8, < capacity).
// unsafe: base is 8-byte aligned (New checks it) and off is a multiple of 8
// below capacity, so the pointer is aligned and inside the region, which b.mem
// keeps alive.
func (b *Bus) hdr(off ringOff) *uint64 {
	return (*uint64)(unsafe.Add(b.base, off))
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// outputName names w in error reports: the path of a file sink (a Path
// method, as filesink.File has), the name of an *os.File, or w's type.
func outputName(w io.Writer) string {
	switch o := w.(type) {
	case interface{ Path() string }:
		if p, ok := sinkPath(o); ok {
			return p
		}
	case interface{ Name() string }:
		return o.Name()
	}
	return fmt.Sprintf("%T", w)
}

// Output is the output's name in error reports.
func (b *Bus) Output() string { return b.output }

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
