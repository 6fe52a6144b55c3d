package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Overflow says what Enqueue does when the ring is full.
type Overflow int

const (
	// Block waits for space; with Config.BlockTimeout > 0 it waits at most
	// that long, then drops the record and counts it.
	Block Overflow = iota
	// Drop returns ErrDropped at once and counts the drop.
	Drop
)

// String returns "Block" or "Drop".
func (o Overflow) String() string {
	switch o {
	case Block:
		return "Block"
	case Drop:
		return "Drop"
	}
	return "Overflow(" + strconv.Itoa(int(o)) + ")"
}

var (
	// ErrClosed is returned by Enqueue after Close (counted as dropped, and in
	// Stats.DroppedClosed).
	ErrClosed = errors.New("bus closed")
	// ErrDropped is returned in Drop mode when the ring is full, or in Block
	// mode when Config.BlockTimeout expired; the record is counted as dropped.
	ErrDropped = errors.New("ring full, record dropped")
)

// BatchWriter is implemented by sinks that accept a whole batch of records at
// once (e.g. filesink, with writev). records are whole records (each ends with
// the producer's bytes, typically '\n'); the slices alias the ring and are
// valid only during the call. It returns how many leading records were written
// completely; on a short/partial write the sink must either complete the record
// or cut back to the last whole record, and report err.
type BatchWriter interface {
	WriteBatch(records [][]byte) (written int, err error)
}

// Syncer is implemented by sinks that can flush to stable storage (*os.File
// does). Flush and Close call it.
type Syncer interface{ Sync() error }

// DefaultCapacity is the default ring size: 8 MiB. At a typical 200-300 byte
// log line that is ~30k records, i.e. several hundred milliseconds of backlog at
// 100k lines/s or ~10-20 ms at the bus's peak rate, enough to ride out a slow
// fsync or a short disk stall without blocking producers, while staying small
// enough to be allocated once per process (and to mmap for the durable ring)
// and to keep the hot part of the ring in the last-level cache.
const DefaultCapacity = 8 << 20

// MinCapacity is the smallest accepted ring size in bytes.
const MinCapacity = 64

// MaxCapacity is the largest accepted ring size in bytes: 1 GiB. The ring is
// allocated (or mapped) whole at New, so a larger one is a configuration
// mistake that would end in the runtime's fatal out-of-memory error.
const MaxCapacity = 1 << 30

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxLatency    = 20 * time.Millisecond
	DefaultHighWatermark = 0.75
	DefaultMinBatch      = 64
	DefaultMaxBatch      = 4096
)

// Config configures a Bus. The zero value is valid: every zero field takes its
// documented default.
type Config struct {
	// Capacity is the ring size in bytes, rounded up to a power of two and
	// raised to MinCapacity. Default DefaultCapacity (8 MiB; see there for
	// why), or, when memory is set, the largest power of two that fits in it.
	Capacity int
	// memory is ring memory supplied by a test; if nil, it is allocated once
	// (or mapped from RingFile). Its base must be 8-byte aligned and it must
	// hold at least Capacity bytes; New zeroes the part it uses. The layout
	// is a plain byte region with inline headers and no Go pointers (see the
	// package documentation).
	memory []byte
	// RingFile, if set, puts the ring in this memory-mapped file (the durable
	// ring, see ringfile.go): records accepted by a process that then dies
	// (kill -9, panic, OOM) are written by the next New on the same file
	// before it accepts anything. New creates the file if needed, takes an
	// exclusive flock (ErrRingLocked if another process holds it), replays
	// what it holds, and reports damaged or foreign files to OnError as a
	// *RingFileError before starting fresh. Oversize records (> maxRecord)
	// are not durable. Unix only.
	RingFile string
	// sinkPosition, used with RingFile, reports where the sink's output ends.
	// The drainer records it before each batch, so that recovery can tell how
	// much of a batch interrupted by a crash reached the output and replay
	// exactly the rest. Default: fstat for an *os.File on a regular file, stat
	// of Path() for writers with a Path() string method (filesink.File);
	// otherwise the position is unknown and an interrupted batch is replayed
	// whole (its records may then appear twice).
	sinkPosition func() (SinkPosition, error)
	// maxRecord is the largest record stored inline in the ring; longer ones
	// take the oversize side path. Default Capacity/8, so one record can never
	// occupy more than an eighth of the ring and a burst of large records
	// cannot starve small ones. It must be at most Capacity/2-8, so that a
	// record plus the padding of a wrap always fits in an empty ring.
	maxRecord int
	// Overflow is what Enqueue does when the ring is full (default Block).
	Overflow Overflow
	// BlockTimeout applies with Block: 0 waits until space frees; > 0 waits at
	// most that long, then drops and counts the record.
	BlockTimeout time.Duration
	// MaxLatency bounds how long a committed record waits before its write
	// starts (default 20 ms): idle sleeps are capped at MaxLatency/2, and
	// batch accumulation (after an idle sleep, or after a round of fewer
	// than minBatch records) waits at most MaxLatency/2, and after a round
	// at most what is left of MaxLatency once that round's write returned.
	MaxLatency time.Duration
	// HighWatermark is a fraction of capacity in (0, 1]; default 0.75.
	// Crossing it wakes a sleeping drainer at once and switches it to
	// MaxBatch-sized rounds.
	HighWatermark float64
	// minBatch is the records per drain round at low load (default 64): after
	// an idle sleep, or a round of fewer records than this, the drainer waits
	// (see MaxLatency) for more before writing, so light and moderate traffic
	// still makes few, larger writes.
	// Only tests change it.
	minBatch int
	// maxBatch is the records per drain round at high load (default 4096).
	// Only tests change it.
	maxBatch int
	// OnError is called with a *SinkError when the sink fails, rate-limited
	// to about once per second per distinct situation (operation and error
	// text), with the number of suppressed repeats. It runs on a reporter
	// goroutine of its own, never the drainer's, so it may Enqueue, Flush
	// or Close on the same bus; reports that find 64 undelivered ones
	// queued are counted and told as one report. Close waits until every
	// report is delivered, except when called from OnError. A panic in it
	// is recovered.
	OnError func(error)
	// DropMarker formats the one in-band line written at a gap after drops
	// (required: the root package supplies the one marker format). It runs
	// on the drainer goroutine: it must not call Flush, Close or a blocking
	// Enqueue on the same bus (the drainer would wait for itself); if it panics
	// or returns nothing, no line is written and OnError is told how many
	// records were lost there.
	DropMarker func(dst []byte, dropped uint64) []byte
	// WriteThrough lets a producer write its record to the sink itself, on
	// its own goroutine, when the ring is empty and the drainer is not
	// writing: a quiet logger is then synchronous (nothing waits in the ring
	// when the process exits), a busy one batched. The rate of such writes
	// is limited (a burst of WriteThroughBurst, then WriteThroughRate per
	// second), so that a producer in a tight loop falls back to batching.
	// Ignored with RingFile (the file keeps accepted records across exits).
	//
	// With WriteThrough, a record that finds a short queue ahead of it (at
	// most QuietWaitDepth bytes: other goroutines logging at the same time)
	// waits until the drainer has written it, within its own rate limit (a
	// burst of QuietWaitBurst, then QuietWaitRate per second): a quiet
	// logger with several goroutines loses nothing at exit either.
	WriteThrough bool
	// wtInterval and wtBurst override the write-through rate limit (tests):
	// wtInterval < 0 means unlimited. qwInterval and qwBurst do the same for
	// the quiet wait's.
	wtInterval time.Duration
	wtBurst    int
	qwInterval time.Duration
	qwBurst    int
	// direct overrides which writes a caller may make itself (tests;
	// default directWriter's answer for the output).
	direct directCheck
	// slowCall overrides SlowCall, the breaker's bound (tests).
	slowCall time.Duration
	// WriteAttempts is how many times the drainer tries to write a batch to
	// a failing sink, backing off between attempts, before the batch's
	// remaining records count as failed; <= 0 means DefaultWriteAttempts.
	// While the sink keeps failing, each later batch gets one attempt (a
	// probe) at the back-off interval, until a write makes progress.
	WriteAttempts int
	// RetryMax caps the back-off between attempts, which doubles from
	// 1 ms (or from RetryMax, if that is shorter); <= 0 means
	// DefaultRetryMax.
	RetryMax time.Duration
}

// Write retry defaults: a batch is tried DefaultWriteAttempts times, the
// back-off doubling from 1 ms up to DefaultRetryMax.
const (
	DefaultWriteAttempts = 4
	DefaultRetryMax      = time.Second
)

// Write-through rate limit: a quiet logger writes every record on the
// caller; at sustained rates above WriteThroughRate records per second (after
// a burst of WriteThroughBurst) records go through the ring and are batched.
// A write-through costs the caller one write call (~1-3 µs into a file or
// pipe), so at WriteThroughRate it costs at most a few percent of a core,
// and the drainer is never woken for it.
const (
	WriteThroughRate  = 10000
	WriteThroughBurst = 256
)

// Quiet-wait limits (see Config.WriteThrough). A record that finds at most
// QuietWaitDepth bytes queued ahead of it waits for the drainer to write
// it, within a rate limit of a burst of QuietWaitBurst, then QuietWaitRate
// per second. A wait costs its caller a drainer round trip (a wake-up and a
// write, ~10-50 µs) and the drainer a small batch, far more than a
// write-through: at 1 000 a second a busy logger at 1 goroutine, which
// finds a short queue after each drainer round, had three times the drainer
// rounds (records per round 990 -> 300). At 100 a second it costs well
// under 1 % of one goroutine's time; beyond it, records are batched without
// waiting. The burst covers a shutdown's worth of lines from many
// goroutines at once. The depth is that of a few dozen typical
// records: goroutines logging at the same moment, not a backlog.
const (
	QuietWaitRate  = 100
	QuietWaitBurst = 256
	QuietWaitDepth = 8 << 10
)

// Stats is a snapshot of the bus counters. See the package documentation for
// how Enqueued is derived.
type Stats struct {
	Enqueued       uint64 // records offered to Enqueue (accepted + dropped); == Written + Dropped + Failed once the ring is empty (after Flush/Close)
	Written        uint64 // records handed to the sink successfully
	WrittenBytes   uint64 // payload bytes of Written
	Dropped        uint64 // records refused: ring full (Drop / timeout) and after Close
	DroppedClosed  uint64 // the part of Dropped refused because the bus was closed
	Failed         uint64 // records accepted but not written because the sink kept failing
	Oversize       uint64 // records that took the oversize side path
	Batches        uint64 // drain rounds that wrote something
	WriteCalls     uint64 // calls into the sink (Write/WriteBatch/writev syscalls)
	DropMarkers    uint64 // in-band gap markers written
	QueueDepth     uint64 // bytes in the ring now (headers and padding included)
	QueueHighWater uint64 // highest QueueDepth seen (sampled by the drainer and by Stats)
	Capacity       uint64 // ring size in bytes
	BatchTarget    uint64 // current adaptive batch size (records)
	Parks          uint64 // times the drainer parked
	Wakeups        uint64 // times a producer woke a parked/sleeping drainer
	WriteThrough   uint64 // the part of Written the producers wrote themselves (Config.WriteThrough)
	Recovered      uint64 // records an earlier process had accepted, replayed from Config.RingFile by New (not part of Enqueued/Written)
	Unrecovered    uint64 // records found in Config.RingFile that could not be replayed (oversize records, whose bytes were on the heap)
}

// SinkError reports a failure of the sink. It is passed to Config.OnError and
// returned by Flush and Close.
type SinkError struct {
	Op         string // "write" or "sync"
	Output     string // the output's name (see outputName)
	Err        error  // the sink's error
	Failed     uint64 // records given up on (counted in Stats.Failed) because of this situation, for Flush/Close
	Suppressed uint64 // OnError only: similar errors not reported since the last report
	Retrying   bool   // Flush, Sync, EnqueueWritten: answered while the records are still retried (Config.WriteAttempts)
}

// ErrRetrying is matched (errors.Is) by a *SinkError answered to Flush,
// Sync or EnqueueWritten while the records it waited for are still being
// retried (Config.WriteAttempts above the default).
var ErrRetrying = errors.New("the records stay queued and are retried")

// Is reports whether target is ErrRetrying and e was answered while
// retrying.
func (e *SinkError) Is(target error) bool { return e.Retrying && target == ErrRetrying }

// Error implements error.
func (e *SinkError) Error() string {
	msg := e.Err.Error()
	if pe, ok := e.Err.(*fs.PathError); ok && pe.Path == e.Output {
		msg = pe.Err.Error() // "write /dev/full: ..." would repeat op and output
	}
	s := "asyncbus: " + e.Op + " " + e.Output + ": " + msg
	if e.Failed > 0 {
		s += fmt.Sprintf(" (%d records failed)", e.Failed)
	}
	if e.Suppressed > 0 {
		s += fmt.Sprintf(" (%d similar errors suppressed)", e.Suppressed)
	}
	if e.Retrying {
		s += " (the records stay queued and are retried)"
	}
	return s
}

// Unwrap returns the sink's error.
func (e *SinkError) Unwrap() error { return e.Err }

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
	// producer that ends the write-through also wakes it (writeThrough1).
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
	wtInterval   int64         // ns between write-throughs at the sustained rate; <= 0: unlimited
	wtTolerance  int64         // ns of burst the rate limit allows
	epoch        time.Time     // monotonic origin of wtTAT and qwTAT
	qwInterval   int64         // quiet-wait rate limit, as wtInterval
	qwTolerance  int64         // quiet-wait burst, as wtTolerance
	yieldShift   uint          // see maxYieldShift
	direct       directCheck   // which write-throughs cannot block for long (see directWriter); nil: none
	slowCall     int64         // SlowCall in ns (the breaker, callerwait.go)
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
	_      pad
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
	wtTAT   int64                 // rate limit: GCRA theoretical arrival time, ns since epoch
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
	_         pad
	// qwTAT is the quiet-wait rate limit's GCRA theoretical arrival time (ns
	// since epoch), updated by CAS from any producer that found a short
	// queue (see quietAllow). Its own line: at high rates it is read (not
	// written: the limit is spent) by the few records per drainer round
	// that find a short queue, and it must not make tail's or head's line
	// bounce when it is written.
	qwTAT atomic.Int64
	_     pad
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

	mu        sync.Mutex    // guards spaceCh, flushReqs, side
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
	call    atomic.Uint32
	final   atomic.Bool
	rep     reporter // runs OnError off the drainer (drainer.go)

	d drainer // drainer-private state
}

type flushReq struct {
	target uint64
	sync   bool       // Flush: sync the sink once target is written; false: written is enough (EnqueueWritten)
	mark   bool       // Flush: its answer moves the "failures reported" mark; false: Sync and EnqueueWritten
	ch     chan error // buffered 1
}

// New validates cfg, allocates the ring (unless cfg.memory is given) and
// starts the drainer goroutine. It fails only for invalid configuration.
func New(w io.Writer, cfg Config) (*Bus, error) {
	return newBus(w, cfg, nil)
}

// newBus is New with a hook that adjusts internal settings (tests) before the
// drainer starts.
func newBus(w io.Writer, cfg Config, adjust func(*Bus)) (*Bus, error) {
	if w == nil {
		panic("bus: nil writer")
	}
	if cfg.DropMarker == nil {
		panic("bus: Config.DropMarker is required")
	}
	capacity := ringCapacity(cfg)
	var mem []byte
	if cfg.RingFile != "" {
		if cfg.memory != nil {
			panic("bus: Config.RingFile and Config.memory are exclusive")
		}
		// Mapped below, once the rest of the configuration is known valid;
		// this placeholder keeps the struct literal uniform.
		mem = make([]byte, 8)
	} else if cfg.memory != nil {
		mem = cfg.memory[:capacity:capacity]
		if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
			panic("bus: Config.memory is not 8-byte aligned")
		}
		clear(mem)
	} else {
		// Allocate as []uint64 so the base is guaranteed 8-byte aligned, then view
		// it as bytes; the backing array contains no pointers.
		words := make([]uint64, capacity/8)
		mem = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), capacity)
	}
	b := &Bus{
		w:            w,
		mem:          mem,
		base:         unsafe.Pointer(&mem[0]),
		capacity:     capacity,
		mask:         capacity - 1,
		overflow:     cfg.Overflow,
		blockTimeout: cfg.BlockTimeout,
		maxLatency:   cfg.MaxLatency,
		minBatch:     cfg.minBatch,
		maxBatch:     cfg.maxBatch,
		onError:      cfg.OnError,
		dropMarker:   cfg.DropMarker,
		wakeCh:       make(chan struct{}, 1),
		done:         make(chan struct{}),
		stopped:      make(chan struct{}),
		abort:        make(chan struct{}),
		retryBase:    time.Millisecond,
		retryMax:     DefaultRetryMax,
		retries:      DefaultWriteAttempts,
		spaceCh:      make(chan struct{}),
		side:         make(map[uint64][]byte),
	}
	b.applyDefaults(cfg)
	if cfg.WriteAttempts > 0 {
		b.retries = cfg.WriteAttempts
	}
	if cfg.RetryMax > 0 {
		b.retryMax = cfg.RetryMax
		b.retryBase = min(b.retryBase, cfg.RetryMax)
	}
	if cfg.RingFile != "" {
		if err := b.openRing(cfg); err != nil {
			return nil, err
		}
	}
	settleTornTail(w) // a sink's held torn-tail report is due now that any replay is done (ringfile.go)
	b.gapPos.Store(math.MaxUint64)
	b.writeThrough = cfg.WriteThrough && b.ring == nil
	interval, burst := time.Second/WriteThroughRate, WriteThroughBurst
	if cfg.wtInterval != 0 {
		interval = cfg.wtInterval
	}
	if cfg.wtBurst != 0 {
		burst = cfg.wtBurst
	}
	b.wtInterval, b.wtTolerance = int64(interval), int64(interval)*int64(burst-1)
	interval, burst = time.Second/QuietWaitRate, QuietWaitBurst
	if cfg.qwInterval != 0 {
		interval = cfg.qwInterval
	}
	if cfg.qwBurst != 0 {
		burst = cfg.qwBurst
	}
	b.qwInterval, b.qwTolerance = int64(interval), int64(interval)*int64(burst-1)
	b.wtOne = make([][]byte, 1)
	b.epoch = time.Now()
	b.direct = cfg.direct
	b.slowCall = int64(cmp.Or(cfg.slowCall, SlowCall))
	if b.direct == nil && b.writeThrough {
		b.direct = directWriter(w)
	}
	b.sink = detectSink(w)
	b.output = outputName(w)
	b.d.init(b)
	if adjust != nil {
		adjust(b)
	}
	go b.run()
	return b, nil
}

func ringCapacity(cfg Config) uint64 {
	c := cfg.Capacity
	switch {
	case c < 0 || c > MaxCapacity:
		panic(fmt.Sprintf("bus: Capacity %d outside [0, %d]", c, MaxCapacity))
	case c == 0 && cfg.memory != nil:
		if len(cfg.memory) < MinCapacity {
			panic(fmt.Sprintf("bus: Config.memory holds %d bytes, need at least %d", len(cfg.memory), MinCapacity))
		}
		c = min(1<<(bits.Len64(uint64(len(cfg.memory)))-1), MaxCapacity)
	case c == 0:
		c = DefaultCapacity
	}
	c = max(c, MinCapacity)
	capacity := uint64(1) << bits.Len64(uint64(c)-1) // round up to a power of two
	if cfg.memory != nil && uint64(len(cfg.memory)) < capacity {
		panic(fmt.Sprintf("bus: Config.memory holds %d bytes, Capacity needs %d", len(cfg.memory), capacity))
	}
	return capacity
}

// applyDefaults fills in zero settings. Values the root's validation
// excludes (negative durations, a bad Overflow or watermark) and bad test
// settings panic.
func (b *Bus) applyDefaults(cfg Config) {
	limit := min(int(b.capacity/2)-hdrSize, maxInline)
	switch {
	case cfg.maxRecord == 0:
		b.maxRecord = min(int(b.capacity/8), limit)
	case cfg.maxRecord < 0 || cfg.maxRecord > limit:
		panic(fmt.Sprintf("bus: maxRecord %d outside (0, Capacity/2-8 = %d]", cfg.maxRecord, limit))
	default:
		b.maxRecord = cfg.maxRecord
	}
	if cfg.Overflow != Block && cfg.Overflow != Drop {
		panic(fmt.Sprintf("bus: invalid Overflow %d", int(cfg.Overflow)))
	}
	if cfg.BlockTimeout < 0 || cfg.MaxLatency < 0 {
		panic(fmt.Sprintf("bus: negative BlockTimeout %v or MaxLatency %v", cfg.BlockTimeout, cfg.MaxLatency))
	}
	if cfg.MaxLatency == 0 {
		b.maxLatency = DefaultMaxLatency
	}
	hw := cfg.HighWatermark
	if hw == 0 {
		hw = DefaultHighWatermark
	}
	if !(hw > 0 && hw <= 1) { // also rejects NaN
		panic(fmt.Sprintf("bus: HighWatermark %v not in (0, 1]", cfg.HighWatermark))
	}
	b.hwBytes = uint64(hw * float64(b.capacity))
	b.yieldShift = min(maxYieldShift, uint(bits.Len64(b.capacity))-1-3) // capacity/8; capacity >= 64 is a power of two
	if b.minBatch == 0 {
		b.minBatch = DefaultMinBatch
	}
	if b.maxBatch == 0 {
		b.maxBatch = DefaultMaxBatch
	}
	// The ring never holds more than capacity/hdrSize entries: larger batch
	// sizes mean nothing and would make the drainer allocate for them.
	maxEntries := int(min(b.capacity/hdrSize, math.MaxInt32))
	b.minBatch, b.maxBatch = min(b.minBatch, maxEntries), min(b.maxBatch, maxEntries)
	if b.minBatch <= 0 || b.minBatch > b.maxBatch {
		panic(fmt.Sprintf("bus: minBatch %d, maxBatch %d", b.minBatch, b.maxBatch))
	}
}

// hdr returns the header word at ring offset off (a multiple of 8, < capacity).
// unsafe: base is 8-byte aligned (New checks it) and off is a multiple of 8
// below capacity, so the pointer is aligned and inside the region, which b.mem
// keeps alive.
func (b *Bus) hdr(off uint64) *uint64 {
	return (*uint64)(unsafe.Add(b.base, off))
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// Enqueue copies p into the ring (it never retains p) and returns nil, or
// ErrDropped (ring full in Drop mode, or Block timeout expired) or ErrClosed.
// In Block mode without timeout it waits for space. With
// Config.WriteThrough, a record that finds the ring empty may be written to
// the sink before Enqueue returns (see writeThrough1), and one that finds a
// short queue ahead of it may wait until the drainer has written it (the
// quiet wait, see Config.WriteThrough); Enqueue's result is the same
// either way.
func (b *Bus) Enqueue(p []byte) error { return b.EnqueueUntil(p, nil) }

// quietWait waits until the record ending at end is written, for at most
// MaxLatency: the record would be written within about that long anyway,
// and the bound keeps a caller that cannot be answered from waiting
// forever: one whose call comes from inside the sink's Write (a writer that
// logs through the handler it serves), while that Write holds the drainer
// or a write-through up. At the bound the record simply stays queued, as
// without the wait. It returns the drainer's answer (nil at the bound).
//
// It allocates nothing (the hot path's promise, and quiet waits happen
// within the first records of a burst): its answer channel and timer come
// from pools. A channel goes back only after it delivered its one answer;
// one whose wait ended otherwise is left to the drainer's late answer.
func (b *Bus) quietWait(end uint64, bound time.Duration) error {
	select {
	case <-b.stopped:
		return b.closeErr
	default:
	}
	ch := quietChans.Get().(chan error)
	tm := quietTimers.Get().(*time.Timer)
	tm.Reset(bound) // stopped and drained when it was put back
	req := flushReq{target: end, ch: ch}
	b.request(req)
	var err error
	select {
	case err = <-ch:
		quietChans.Put(ch) // answered once, now empty: reusable
	case <-b.stopped:
		b.forget(req)
		err = b.closeErr
	case <-tm.C:
		// Still queued, written as usual; the drainer answers into ch's
		// buffer later, so ch is not reused.
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

// Pools for quietWait: answer channels (buffered 1, empty) and stopped
// timers.
var (
	quietChans  = sync.Pool{New: func() any { return make(chan error, 1) }}
	quietTimers = sync.Pool{New: func() any {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}}
)

// quietAllow applies the quiet wait's rate limit (GCRA, as wtAllow, but
// shared by every producer, so by CAS). Once the limit is spent it costs a
// clock read and one load.
func (b *Bus) quietAllow() bool {
	if b.qwInterval <= 0 {
		return true
	}
	now := int64(time.Since(b.epoch)) // monotonic
	for {
		tat := b.qwTAT.Load() // atomic: other producers update it by CAS
		if tat-now > b.qwTolerance {
			return false
		}
		// CAS: two producers allowed from one tat would spend one token.
		if b.qwTAT.CompareAndSwap(tat, max(tat, now)+b.qwInterval) {
			return true
		}
	}
}

// EnqueueWritten is Enqueue for records that must reach the sink before the
// call returns (the root handler's Error level): the record is written
// through when the ring is empty (whatever the rate), and otherwise
// EnqueueWritten waits until the drainer has written it. It does not sync
// the sink (Flush does). Besides Enqueue's errors it returns a *SinkError
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
	if err == nil && ahead == math.MaxUint64 && b.ring != nil {
		return b.waitOversize(end, done)
	}
	if err != nil || wrote || !b.writeThrough || done != nil || ahead > QuietWaitDepth ||
		!b.callerMayWait(speedHint) || !b.quietAllow() {
		return err
	}
	// The record was accepted: what the drainer answers (failures since
	// the last Flush) is not this call's result. Its failure, if any, is
	// counted and reported by OnError, Flush and Close as for any record.
	b.quietWait(end, b.quietWaitFor())
	return nil
}

// waitOversize waits, with a ring file, until the oversize record ending at
// end is written: its bytes are on the heap, not in the file, so only the
// output keeps it across a kill -9. It is back-pressure like a full ring:
// in Block mode it waits until the write, or for at most BlockTimeout; in
// Drop mode, with a done channel, or from inside a call into the output it
// does not wait (the record is then kept in memory only, and a crash
// before its write counts it in Stats.Unrecovered at the next start).
func (b *Bus) waitOversize(end uint64, done <-chan struct{}) error {
	if b.overflow == Drop || done != nil || b.inOutputCall() {
		return nil
	}
	// The drainer's answer (failures since the last Flush) is not this
	// call's result: a failed write is counted and reported as for any
	// record.
	_ = b.wait(context.Background(), end, false, false, b.blockTimeout)
	return nil
}

// EnqueueWrittenCtx is EnqueueWritten bounded by ctx: when ctx ends, a wait
// for room drops the record (ErrDropped), and a wait for its write returns
// ctx.Err() with the record queued, to be written as usual. If ctx can end
// (a non-nil Done), the record is never written through: the drainer
// writes it and the caller waits for that, which ctx can interrupt.
//
// The wait lasts at most ErrorWaitMax and is skipped while the output is
// stuck (a call into it has taken longer) or when the caller is itself
// inside a call into the output (a writer logging through its handler);
// the record then stays queued and the result is nil.
func (b *Bus) EnqueueWrittenCtx(ctx context.Context, p []byte) error {
	end, wrote, _, err := b.enqueue(p, true, ctx.Done())
	if err != nil || wrote || !b.callerMayWait(speedSlow) {
		return err
	}
	if ctx.Done() == nil {
		return b.quietWait(end, ErrorWaitMax) // pooled: an Error record allocates nothing either
	}
	if err := b.wait(ctx, end, false, false, ErrorWaitMax); err != ErrWaitBound {
		return err
	}
	return nil
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
		h := b.head.Load()    // atomic acquire: the space below h is consumed and zeroed
		wh := b.wtHead.Load() // atomic acquire, before tail too: wh <= t
		t := b.tail.Load()    // atomic: may observe closedBit set by Close
		if t&closedBit != 0 {
			return 0, false, 0, b.dropClosed()
		}
		off := t & b.mask
		total := need
		if room := b.capacity - off; need > room {
			total = room + need // padding to the end of the region, record at offset 0
		}
		if t+total-h > b.capacity {
			if err := b.full(&w, t, h, -1); err != nil {
				return 0, false, 0, err
			}
			continue
		}
		// The one contended write: a CAS, because the padding decision depends on t.
		if !b.tail.CompareAndSwap(t, t+total) {
			continue
		}
		if (h == t || wh == t) && total == need && b.writeThrough && done == nil {
			// The ring was empty when we reserved (see writeThrough1).
			switch b.writeThrough1(p, t, need, force) {
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
			atomic.StoreUint64(b.hdr(off), flagCommit|flagPadding|(b.capacity-off))
			off = 0
		}
		b.commit(off, p)
		b.wakeAfterCommit(t, t+total, t+total-h)     // t+total-h: the depth, an upper bound (head may have moved on)
		return t + total, false, t - max(h, wh), nil // h, wh <= t (loaded before tail)
	}
}

// commit copies rec into the entry at ring offset off and publishes it.
func (b *Bus) commit(off uint64, rec []byte) {
	n := uint64(len(rec))
	copy(b.mem[off+hdrSize:off+hdrSize+n], rec)
	word := flagCommit | n
	if b.ring != nil {
		// Durable ring: the checksum rides in the spare bits of the same
		// word, so the commit is still one atomic store (see ringfile.go).
		word |= recordSum(rec) << sumShift
	}
	// Release store: the payload written above happens-before the drainer's
	// atomic load that observes flagCommit.
	atomic.StoreUint64(b.hdr(off), word)
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
// drainer waits at a written-through reservation instead, see writeThrough1.
func (b *Bus) wakeAfterCommit(t, end, depth uint64) {
	if depth >= b.hwBytes || b.head.Load() >= t || b.wtHead.Load() >= t {
		if s := b.state.Load(); s != stRunning {
			b.wake(s, depth)
		}
	}
	if depth >= b.hwBytes && (t^(end-1))>>b.yieldShift != 0 {
		// Back-pressure before the ring is full: when producers outnumber
		// cores, the drainer may be runnable but waiting behind them for a
		// processor. Yielding lets it run. Only the producer whose
		// reservation crosses a 2^b.yieldShift-byte boundary yields, not every
		// one: a yield costs a scheduler round trip and a wakep (~150 ns,
		// more than the rest of Enqueue), and a drainer that cannot keep up
		// keeps the ring past the watermark, so a yield on every record made
		// producers spend most of their time in the scheduler, taking CPU
		// from the drainer and the kernel's write on a small machine.
		runtime.Gosched()
	}
}

// wtAllow applies the write-through rate limit (GCRA: a burst of
// WriteThroughBurst, then one per interval). Only a producer whose
// reservation found the ring empty calls it, holding wmu (see writeThrough1),
// so wtTAT needs no synchronisation of its own.
func (b *Bus) wtAllow() bool {
	if b.wtInterval <= 0 {
		return true
	}
	now := int64(time.Since(b.epoch)) // monotonic
	tat := max(b.wtTAT, now)
	if tat-now > b.wtTolerance {
		return false
	}
	b.wtTAT = tat + b.wtInterval
	return true
}

// reportWriteThrough hands the error of a failed write-through to the
// drainer, which reports it through its own rate limit (one report per
// distinct error a second, shared with its own failures) when it next
// writes: the record's rest, committed to the ring, is then retried there.
//
// An *os.File's or a net.Conn's Write wraps the errno (in a *fs.PathError,
// a *net.OpError), while the drainer's writev reports the errno itself:
// the wrappers are taken off, so that one failure is one distinct error to
// the rate limit, and one report.
func (b *Bus) reportWriteThrough(err error) {
	var errno syscall.Errno
	if b.sink == sinkWritev && errors.As(err, &errno) {
		err = errno // under *fs.PathError (files), *net.OpError (sockets), ...
	}
	if b.onError != nil {
		b.wtErr.Store(&err) // atomic: the drainer swaps it out; a later error replaces an unreported one
	}
}

type wtResult int

const (
	wtNotTried  wtResult = iota // the caller commits the record to the ring as usual
	wtWritten                   // written to the sink, the reservation released
	wtCommitted                 // the sink failed: what it did not take is committed at t
	wtCounted                   // a Close gave up meanwhile: the record is counted (Written or Failed), nothing committed
)

// wtClaim values (see Bus.wtClaim and giveup.go).
const (
	wtIdle      = 0
	wtWriting   = 1 // a write-through is in flight at [wtStart-1, wtEnd)
	wtAbandoned = 2 // Close's final count skipped it: its producer counts it
)

// writeThrough1 writes p, reserved at [t, t+need) while head == t, straight
// to the sink, if the rate limit allows it (or force).
//
// Why the order of the output is the ring's order: head == t or wtHead == t
// at the reservation means every entry below t is in the output (head is
// published only after the sink's write call returned, wtHead after ours).
// Entries reserved after ours are not: the drainer stops at our header,
// which stays zero until we publish wtHead past it (the drainer then
// adopts it, see drainer.adoptHead). So nothing
// else can be written between the last consumed record and ours except a
// drop marker or a sync by the drainer, which hold wmu; TryLock fails then,
// and the record takes the ring. A pending gap at or below t keeps the
// record in the ring too, behind its marker.
//
// Why at most one producer is here at a time (and may use wtTAT, wtOne):
// the next producer to find head or wtHead == tail at its reservation does
// so only after one of them passed our reservation, which happens after we
// stored wtHead or the drainer consumed our committed entry.
func (b *Bus) writeThrough1(p []byte, t, need uint64, force bool) wtResult {
	if !b.wmu.TryLock() {
		return wtNotTried
	}
	defer b.wmu.Unlock()
	if b.gapPos.Load() <= t { // atomic: a drop registers its gap with a store under dropMu
		// (a gap registered after this load belongs to a record refused
		// concurrently with ours: its marker after our record is in order;
		// a marker at or below t is held behind a rest committed here, see
		// drainer.collect)
		return wtNotTried
	}
	if b.owing.Load() { // atomic: see owing; the drainer writes the owed bytes before our record
		return wtNotTried
	}
	// Only where the write cannot block for long, and not while the
	// output is slow (the breaker, callerwait.go).
	if b.direct == nil || b.outputSpeed() != speedFast || !b.direct(len(p)) {
		return wtNotTried
	}
	// The rate limit last, so that a record that takes the ring anyway
	// does not spend a write-through's token.
	if !force && !b.wtAllow() {
		return wtNotTried
	}
	// Published before the abort check (seq-cst): a Close giving up either
	// sees the claim, or we see its abort (giveup.go).
	b.wtEnd.Store(t + need)
	b.wtStart.Store(t + 1)
	b.wtClaim.Store(wtWriting)
	if b.aborted.Load() {
		if b.wtClaim.CompareAndSwap(wtWriting, wtIdle) {
			return wtNotTried // committed to the ring, where Close's count finds it
		}
		b.failed.Add(1) // Close's count skipped our reservation
		return wtCounted
	}
	var n int
	var err error
	start := b.beginCall()
	if b.sink == sinkBatch {
		b.wtOne[0] = p
		var k int
		k, err = sinkWriteBatch(b.w.(BatchWriter), b.wtOne)
		b.wtOne[0] = nil
		if k >= 1 {
			n = len(p)
		} // else: the sink cut back to the last whole record, nothing of p
	} else {
		n, err = sinkWrite(b.w, p)
		n = max(0, min(n, len(p)))
	}
	b.endCall(start)
	if !b.wtClaim.CompareAndSwap(wtWriting, wtIdle) {
		// Close gave up during the call and left this record to us.
		if n == len(p) {
			b.written.Add(1)
			b.writtenBytes.Add(uint64(n))
		} else {
			b.failed.Add(1)
		}
		return wtCounted
	}
	// Atomic adds: these counters are otherwise the drainer's, which may
	// add to them at the same time (a marker round), and Stats reads them.
	b.writeCalls.Add(1)
	if n < len(p) || (err != nil && n == 0) {
		if err != nil {
			b.reportWriteThrough(err)
		}
		// The drainer writes the rest with its retries and error reports.
		// Committed under wmu, so no marker can land inside a torn line.
		// The rest is shorter than the reservation: padding fills the gap
		// (committed first, so the drainer never waits at a zero word).
		off, used := t&b.mask, align8(hdrSize+uint64(len(p)-n))
		if used < need {
			atomic.StoreUint64(b.hdr(off+used), flagCommit|flagPadding|(need-used))
		}
		if n > 0 {
			// Before the commit (release): the drainer must know that the
			// record's first n bytes are out, to end the line if the rest fails.
			b.wtRestLen.Store(uint64(n))
			b.wtRest.Store(t + 1)
		}
		b.commit(off, p[n:])
		return wtCommitted
	}
	b.written.Add(1)
	b.writtenBytes.Add(uint64(n))
	b.wtCount.Add(1)
	// Release store after the counters: a Stats that sees the new wtHead
	// sees the record as written. Our header at t was never written, so the
	// space is still zero when the drainer adopts it as released.
	b.wtHead.Store(t + need)
	// Producers that reserved after us and committed before our wtHead store
	// saw head and wtHead below their reservation and did not check the
	// drainer (see wakeAfterCommit); if there are any (tail moved), we do.
	// A drainer in stWaitWT waits for this very write-through: we wake it
	// whatever tail says. The drainer parks after storing its state and
	// loading wtHead (hasWork, waitUncommitted): either it sees our store,
	// or our state load below (seq-cst, after it) sees its state.
	switch s := b.state.Load(); s {
	case stRunning:
	case stWaitWT:
		b.wake(s, 0)
	default:
		if next := b.tail.Load() &^ closedBit; next > t+need {
			b.wake(s, next-(t+need))
		}
	}
	return wtWritten
}

// enqueueOversize puts p in the heap side table and commits an 8-byte
// reference entry in the ring, so oversize records keep their ring order.
// Oversize records are never written through.
func (b *Bus) enqueueOversize(p []byte, done <-chan struct{}) (uint64, bool, uint64, error) {
	sz := int64(len(p))
	w := waitState{done: done}
	for {
		h := b.head.Load() // before tail, as in Enqueue, so that h <= t
		t := b.tail.Load()
		if t&closedBit != 0 {
			return 0, false, math.MaxUint64, b.dropClosed()
		}
		// Outstanding oversize bytes are bounded by capacity; one record is
		// always admitted when none is outstanding, so any size makes progress.
		ob := b.oversizeBytes.Load()
		if t+hdrSize-h > b.capacity || (ob > 0 && ob+sz > int64(b.capacity)) {
			if err := b.full(&w, t, h, ob); err != nil {
				return 0, false, math.MaxUint64, err
			}
			continue
		}
		// An 8-byte entry never needs padding: offsets are multiples of 8.
		if !b.tail.CompareAndSwap(t, t+hdrSize) {
			continue
		}
		b.oversizeBytes.Add(sz)
		b.oversize.Add(1)
		cp := append([]byte(nil), p...)
		b.mu.Lock()
		b.side[t] = cp
		b.mu.Unlock()
		off := t & b.mask
		// Release store after the map insert (mutex) so the drainer finds the entry.
		// The length bits carry the record's length (lenMask if larger), which
		// only ring-file recovery reads: the drainer ignores them.
		atomic.StoreUint64(b.hdr(off), flagCommit|flagOversize|min(uint64(len(p)), lenMask))
		b.wakeAfterCommit(t, t+hdrSize, t+hdrSize-h)
		return t + hdrSize, false, math.MaxUint64, nil
	}
}

func (b *Bus) dropClosed() error {
	b.dropped.Add(1)
	b.droppedClosed.Add(1)
	return ErrClosed
}

// drop counts a record refused at tail position t and registers the gap at t.
// Each distinct gap position gets its own marker, so a reader sees the gap
// exactly where it is: every record a producer had accepted before the drop
// lies below t, every record it accepts afterwards at or above t. This runs
// only when the ring is full, so a short critical section is acceptable here.
func (b *Bus) drop(t uint64) error {
	b.dropMu.Lock()
	if b.gapsFinal {
		// Close has finished draining while this producer waited: the
		// output is complete, so this is a record refused after Close.
		b.dropMu.Unlock()
		return b.dropClosed()
	}
	b.dropped.Add(1)
	i := len(b.gaps)
	for i > 0 && b.gaps[i-1].pos > t { // nearly always appends or hits the last gap
		i--
	}
	if i > 0 && b.gaps[i-1].pos == t {
		b.gaps[i-1].n++
	} else {
		b.gaps = slices.Insert(b.gaps, i, gap{pos: t, n: 1})
	}
	// Atomic store under the lock: the drainer checks the lowest gap with one
	// load per entry and takes the lock only when it has reached it.
	b.gapPos.Store(b.gaps[0].pos)
	b.dropMu.Unlock()
	return ErrDropped
}

// takeGaps removes the gaps at or below pos and returns their drop count.
// final marks the last call, after which no gap is accepted (see gapsFinal).
func (b *Bus) takeGaps(pos uint64, final bool) uint64 {
	b.dropMu.Lock()
	defer b.dropMu.Unlock()
	b.gapsFinal = b.gapsFinal || final
	var n uint64
	i := 0
	for ; i < len(b.gaps) && b.gaps[i].pos <= pos; i++ {
		n += b.gaps[i].n
	}
	b.gaps = slices.Delete(b.gaps, 0, i)
	next := uint64(math.MaxUint64)
	if len(b.gaps) > 0 {
		next = b.gaps[0].pos
	}
	b.gapPos.Store(next)
	return n
}

type gap struct{ pos, n uint64 }

// wake wakes the drainer if it is parked, or if it is sleeping and the queue
// depth has crossed the high watermark. The CAS makes exactly one producer
// send the token; the channel has room for it, so the send never blocks.
func (b *Bus) wake(s uint32, depth uint64) {
	if s == stSleeping && depth < b.hwBytes {
		return // a bounded sleep ends within MaxLatency/2 anyway
	}
	if b.state.CompareAndSwap(s, stRunning) {
		b.wakeups.Add(1)
		select {
		case b.wakeCh <- struct{}{}:
		default: // a token is already pending
		}
	}
}

// kick wakes the drainer whether it is parked or sleeping (Flush, Close, full
// ring). A running drainer needs no token: the caller has published its reason
// (flushPending, closedBit, a committed record) before loading state, and the
// drainer re-checks those after storing stParked (see park).
func (b *Bus) kick() {
	if s := b.state.Load(); s != stRunning && b.state.CompareAndSwap(s, stRunning) {
		b.wakeups.Add(1)
		select {
		case b.wakeCh <- struct{}{}:
		default:
		}
	}
}

type waitState struct {
	spins    int
	deadline time.Time
	done     <-chan struct{} // EnqueueUntil, EnqueueWrittenCtx: closed, the wait ends in a drop; nil: never
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

// full handles a ring that had no room at tail t and head h (or, with ob >= 0,
// an oversize budget that held ob bytes): it drops (Drop mode, or Block after
// its timeout) or waits for the drainer to free space. A nil return means
// "try again".
func (b *Bus) full(w *waitState, t, h uint64, ob int64) error {
	if b.overflow == Drop {
		b.kick()
		return b.drop(t)
	}
	select {
	case <-w.done: // a nil channel never fires
		b.kick()
		return b.drop(t)
	default:
	}
	if w.spins == 0 {
		b.kick() // a full ring is past any watermark: make sure the drainer runs
		if b.blockTimeout > 0 {
			w.deadline = time.Now().Add(b.blockTimeout)
		}
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
	if b.inOutputCall() {
		// A writer logging through its own handler while the ring is
		// full: the room it would wait for is freed only after its own
		// call returns.
		return b.drop(t)
	}
	// Park. Lost-wake-up argument (all operations sequentially consistent):
	// we increment waiters, then re-check tail/head; the drainer stores head,
	// then loads waiters. Either our re-check sees the new head, or the
	// drainer's load sees waiters > 0 and closes the channel we took before
	// the re-check.
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	b.mu.Lock()
	ch := b.spaceCh
	b.mu.Unlock()
	if b.tail.Load() != t || b.head.Load() != h || (ob >= 0 && b.oversizeBytes.Load() != ob) {
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

// Flush returns once every record committed before the call has been handed
// to the sink (or counted as failed), and the sink has been Sync()ed if it is
// a Syncer. It returns ctx.Err() if ctx ends first, a *SinkError if the sync
// failed or if records failed since the previous Flush was answered (so a
// failure is always reported to the next Flush, even one called after the
// failure), and nil after Close has drained. With Config.WriteAttempts
// above the default, a Flush waiting for a batch that is still being
// retried is answered once the default attempts are spent, with a
// *SinkError marked Retrying (errors.Is ErrRetrying), the records queued.
func (b *Bus) Flush(ctx context.Context) error {
	return b.wait(ctx, b.tail.Load()&^closedBit, true, true, 0) // every record committed before now lies below
}

// Sync is Flush for a record that must be on disk before its caller goes on
// (SyncLevel): it writes and syncs everything committed before the call and
// reports failures since the previous Flush answer, but does not move that
// mark, so the next Flush or Close still reports them.
func (b *Bus) Sync(ctx context.Context) error {
	return b.wait(ctx, b.tail.Load()&^closedBit, true, false, 0)
}

// SyncBounded is Sync for a log call: it waits at most SyncWaitMax, and not
// at all while the output is stuck or from inside a call into the output
// (a writer logging through its handler); it then returns ErrWaitBound,
// the records still queued.
func (b *Bus) SyncBounded(ctx context.Context) error {
	if !b.callerMayWait(speedSlow) {
		return ErrWaitBound
	}
	return b.wait(ctx, b.tail.Load()&^closedBit, true, false, SyncWaitMax)
}

// ErrWaitBound is returned by SyncBounded when the output did not answer
// within its bound: the records stay queued.
var ErrWaitBound = errors.New("the output did not answer within the wait's bound; the records stay queued")

// wait returns once the drainer has written everything below target, and
// synced the sink if sync is set (see Flush for the errors); mark says
// whether its answer moves the mark of failures reported. With bound > 0
// it returns ErrWaitBound once bound has passed.
func (b *Bus) wait(ctx context.Context, target uint64, sync, mark bool, bound time.Duration) error {
	select {
	case <-b.stopped:
		return b.closeErr // the drainer is done: nobody would take the request
	default:
	}
	req := flushReq{target: target, sync: sync, mark: mark, ch: make(chan error, 1)}
	b.request(req)
	var expired <-chan time.Time
	if bound > 0 {
		tm := time.NewTimer(bound)
		defer tm.Stop()
		expired = tm.C
	}
	select {
	case err := <-req.ch:
		return err
	case <-b.stopped:
		b.forget(req)
		return b.closeErr
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return ErrWaitBound // still queued: the drainer answers into req.ch's buffer later
	}
}

// request hands req to the drainer and wakes it.
func (b *Bus) request(req flushReq) {
	b.mu.Lock()
	b.flushReqs = append(b.flushReqs, req)
	b.mu.Unlock()
	b.flushPending.Store(true) // seq-cst after the append: the drainer takes the list when it sees the flag
	b.kick()
}

// forget removes req once the books are final (stopped): the drainer has
// drained or counted everything up to the final tail, which is at least
// req's target, but it may have finished before taking req, which would
// then be kept forever.
func (b *Bus) forget(req flushReq) {
	b.mu.Lock()
	b.flushReqs = slices.DeleteFunc(b.flushReqs, func(r flushReq) bool { return r.ch == req.ch })
	b.mu.Unlock()
}

// Close stops accepting records (later Enqueue calls return ErrClosed and are
// counted), drains the ring, syncs the sink and stops the drainer. It is
// idempotent and safe from several goroutines; every call waits for the same
// drain. If ctx ends first, Close gives up (giveUp): before it returns
// ctx.Err(), every record not written is counted as failed, every waiting
// caller is answered, and no new call into the output starts.
func (b *Bus) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.tail.Or(closedBit) // atomic: from now on every reservation CAS fails
		b.broadcastSpace()   // parked Block producers re-check and see closed
		b.kick()
	})
	select {
	case <-b.done:
		return b.closed(ctx)
	case <-b.abort: // another Close gave up: its count ends at once
		<-b.stopped
		return b.closeErr
	case <-ctx.Done():
		b.giveUp()
		return ctx.Err()
	}
}

// Stats returns a snapshot of the counters. It is cheap (a few atomic loads)
// and callable at any time; see the package documentation for Enqueued.
func (b *Bus) Stats() Stats {
	// Before the counts: once final is seen, the give-up's counts are in
	// them (stored before final; giveup.go).
	final := b.final.Load()
	// Load the drainer-side counts before tail/head so that records written
	// between the loads are not counted twice in the in-ring estimate.
	s := Stats{
		Written:       b.written.Load(),
		WrittenBytes:  b.writtenBytes.Load(),
		Failed:        b.failed.Load(),
		Dropped:       b.dropped.Load(),
		DroppedClosed: b.droppedClosed.Load(),
		Oversize:      b.oversize.Load(),
		Batches:       b.batches.Load(),
		WriteCalls:    b.writeCalls.Load(),
		DropMarkers:   b.markers.Load(),
		Capacity:      b.capacity,
		BatchTarget:   b.batchTarget.Load(),
		Parks:         b.parks.Load(),
		Wakeups:       b.wakeups.Load(),
		WriteThrough:  b.wtCount.Load(),
		Recovered:     b.recovered,
		Unrecovered:   b.unrecovered,
	}
	entries, entryBytes := b.entries.Load(), b.entryBytes.Load()
	h := max(b.head.Load(), b.wtHead.Load()) // a written-through record is not in the ring
	t := b.tail.Load() &^ closedBit
	if t > h && !final { // after a give-up what is left is counted as failed
		s.QueueDepth = t - h
	}
	for { // atomic max, so a reader never lowers the high-water mark
		hw := b.highWater.Load()
		if s.QueueDepth <= hw || b.highWater.CompareAndSwap(hw, s.QueueDepth) {
			s.QueueHighWater = max(hw, s.QueueDepth)
			break
		}
	}
	var inRing uint64
	if s.QueueDepth > 0 {
		avg := uint64(hdrSize + 200) // before the drainer has seen anything
		if entries > 0 {
			avg = max(entryBytes/entries, hdrSize)
		}
		inRing = max(s.QueueDepth/avg, 1)
	}
	s.Enqueued = s.Written + s.Failed + s.Dropped + inRing
	return s
}

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
