package bus

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/asyncbus/asyncbus/internal/outputcall"
	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
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

// BatchWriter is implemented by outputs that accept a whole batch of records at
// once (e.g. filesink, with writev). records are whole records (each ends with
// the producer's bytes, typically '\n'); the slices alias the ring and are
// valid only during the call. It returns how many leading records were written
// completely; on a short/partial write the output must either complete the record
// or cut back to the last whole record, and report err. It is the
// interface the drainer's guarded call takes (outputcall.WriteBatch).
type BatchWriter = outputcall.Batcher

// Syncer is implemented by outputs that can flush to stable storage (*os.File
// does). Flush and Close call it.
type Syncer interface{ Sync() error }

// DefaultCapacity is the default ring size: 8 MiB, about 30,000 typical records, absorbs a busy service's burst.
const DefaultCapacity = 8 << 20

// MinCapacity is the smallest accepted ring size in bytes.
const MinCapacity = 64

// MaxCapacity is the largest accepted ring size in bytes: 1 GiB. The ring is
// allocated (or mapped) whole at New, so a larger one is a configuration
// mistake that would end in the runtime's fatal out-of-memory error.
const MaxCapacity = 1 << 30

// Defaults applied by New to zero Config fields.
const (
	// DefaultMaxLatency: 20 ms, unnoticed by a person watching a log, lets a steady logger batch hundreds.
	DefaultMaxLatency = 20 * time.Millisecond
	// DefaultMinBatch: a smaller round gathers first; 64 makes a write call's fixed cost a few percent.
	DefaultMinBatch = 64
	// DefaultMaxBatch (derived): a cacheBatch of the shortest lines (64 bytes with the header).
	DefaultMaxBatch = cacheBatch / 64
)

// Config configures a Bus. The zero value is valid: every zero field takes its
// documented default.
type Config struct {
	// Capacity is the ring size in bytes, rounded up to a power of two and
	// raised to MinCapacity. Default DefaultCapacity (8 MiB; see there for
	// why).
	Capacity int
	// RingFile, if set, puts the ring in this memory-mapped file (Unix
	// only; package ringfile): New locks it (ErrRingLocked), replays the
	// records a dead process had accepted, and reports a damaged file to
	// OnError (*ringfile.Error) before starting fresh. Oversize records
	// are not durable.
	RingFile string
	// outputPosition, used with RingFile, reports where the output ends
	// (a test's; default what ringfile.Options.SetOutput finds).
	outputPosition func() (ringfile.Position, error)
	// maxRecord is the largest record stored inline; longer ones take the
	// oversize path. Default Capacity/8: a burst of large records cannot
	// starve small ones. At most Capacity/2-8: a record plus a wrap's
	// padding fits in an empty ring. Only tests set it.
	maxRecord int
	// Overflow is what Enqueue does when the ring is full (default Block).
	Overflow Overflow
	// BlockTimeout applies with Block: 0 waits until space frees; > 0 waits at
	// most that long, then drops and counts the record.
	BlockTimeout time.Duration
	// MaxLatency bounds how long a committed record waits before its write
	// starts (default 20 ms): the idle sleep is MaxLatency/2, and a gather
	// (after it, or after a round of fewer than minBatch records) at most
	// MaxLatency/2, after a round what is left of MaxLatency once its write
	// returned.
	MaxLatency time.Duration
	// HighWatermark is a fraction of capacity in (0, 1]: a backlog of
	// that much wakes a sleeping drainer at once and ends a gather.
	// Default (0): cacheBatch bytes, or three quarters of a smaller ring.
	HighWatermark float64
	// minBatch: after an idle sleep, or a round of fewer records than
	// this, the drainer gathers more (see MaxLatency); maxBatch is the
	// most records a batch carries. Defaults DefaultMinBatch and
	// DefaultMaxBatch; only tests change them.
	minBatch, maxBatch int
	// OnError is called with a *OutputError when the output fails, once a
	// second per distinct error with the count of repeats, on a reporter
	// goroutine (package reporter), so it may Enqueue, Flush or Close on
	// the same bus; Close waits for its reports unless called from it.
	OnError func(error)
	// DropMarker formats the line written at a gap after drops (required).
	// It runs on the drainer: it must not Flush, Close or block on the same
	// bus; if it panics or returns nothing, OnError is told the count.
	DropMarker func(dst []byte, dropped uint64) []byte
	// QuietWait makes a record behind at most QuietWaitDepth bytes wait
	// for its write (Bus.quietWait) while the program is quiet
	// (QuietWaitRate), in every overflow mode: a quiet program that
	// returns without Close keeps its lines. Ignored with RingFile; the
	// root leaves it off for network outputs.
	QuietWait bool
	// WriteAttempts is how many times a batch is tried, backing off, before
	// its records count as failed (<= 0: DefaultWriteAttempts); while the
	// output stays down, a probe at the back-off interval (drainer.down).
	WriteAttempts int
	// RetryMax caps the back-off between attempts, which doubles from
	// 1 ms (or from RetryMax, if that is shorter); <= 0 means
	// DefaultRetryMax.
	RetryMax time.Duration
	// Sequence, if not seqnum.Off, numbers records in the order they are
	// written, with RunID (seq.go): every record enqueued must then begin
	// with seqnum.Room bytes of headroom, where the prefix is written. Not
	// with RingFile (New refuses it).
	Sequence seqnum.Format
	// SeqEncode writes the numbers for seqnum.Encoded.
	SeqEncode seqnum.Encode
	// RunID is the run identity written with the numbers (seqnum.RunIDLen
	// hex digits; default seqnum.NewRunID()).
	RunID string
}

// Write retry defaults: a batch is tried DefaultWriteAttempts times, the
// back-off doubling from 1 ms up to DefaultRetryMax.
const (
	DefaultWriteAttempts = 4           // rides out a transient error (1+2+4 ms of back-off) without holding records long
	DefaultRetryMax      = time.Second // a dead output costs a call a second; a revived one is found within a second
)

// cacheBatch is the backlog that wakes a sleeping drainer (by default)
// and a plain io.Writer's batch cap and staging buffer (allocated once).
// 256 KiB: fits a core's L2, so the drainer reads records while in cache.
const cacheBatch = 256 << 10

// New validates cfg, allocates the ring and
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
	mem, mapped := ringMemory(cfg, capacity)
	b := &Bus{
		w:            w,
		ring:         ring{mem: mem, base: unsafe.Pointer(&mem[0]), capacity: capacity, mask: capacity - 1},
		overflow:     cfg.Overflow,
		blockTimeout: cfg.BlockTimeout,
		maxLatency:   cfg.MaxLatency,
		minBatch:     cfg.minBatch,
		maxBatch:     cfg.maxBatch,
		onError:      cfg.OnError,
		dropMarker:   cfg.DropMarker,
		done:         make(chan struct{}),
		stopped:      make(chan struct{}),
		retryBase:    time.Millisecond,
		retryMax:     DefaultRetryMax,
		retries:      DefaultWriteAttempts,
		spaceCh:      make(chan struct{}),
		side:         make(map[uint64][]byte),
	}
	b.abort = make(chan struct{})
	b.idleStrategy.init()
	b.applyDefaults(cfg)
	if cfg.WriteAttempts > 0 {
		b.retries = cfg.WriteAttempts
	}
	if cfg.RetryMax > 0 {
		b.retryMax = cfg.RetryMax
		b.retryBase = min(b.retryBase, cfg.RetryMax)
	}
	if err := b.initSeq(cfg); err != nil { // sequence numbers (seq.go)
		return nil, err
	}
	if cfg.RingFile != "" {
		if err := b.openRing(cfg); err != nil {
			return nil, err
		}
	}
	ringfile.SettleTornTail(w)     // an output's held torn-tail report is due now that any replay is done
	b.gapPos.Store(math.MaxUint64) // atomic, row gapPos
	b.quietWaits = cfg.QuietWait && b.file == nil
	b.quietWait = quietWait
	b.quietWait.bound = min(b.maxLatency, DefaultMaxLatency)
	b.epoch = time.Now()
	b.stuckAfter = int64(StuckAfter)
	b.kind, b.d.wv = outputKindOf(w)
	b.output = outputName(w)
	b.d.init(b)
	if adjust != nil {
		adjust(b)
	}
	if mapped != nil {
		b.mapped = mapped
		// The mapping goes once nothing reaches the Bus (mapped does
		// not): every reader of the ring reads it through the Bus.
		runtime.AddCleanup(b, (*mapping).unmap, mapped)
	}
	go b.run()
	return b, nil
}

// ringMemory returns the ring's memory: a fresh 8-byte-aligned region,
// a mapping where the platform has one (mapRing, returned too), or, with
// a ring file, a placeholder that openRing replaces with the file's
// mapping once the rest of the configuration is known valid.
func ringMemory(cfg Config, capacity uint64) ([]byte, *mapping) {
	if cfg.RingFile != "" {
		return make([]byte, 8), nil // keeps the Bus literal uniform
	}
	if m := mapRing(capacity); m != nil {
		return m.ring, m // page-aligned: 8-byte aligned
	}
	// Allocate as []uint64 so the base is guaranteed 8-byte aligned, then
	// view it as bytes; the backing array contains no pointers.
	words := make([]uint64, capacity/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), capacity), nil
}

func ringCapacity(cfg Config) uint64 {
	c := cfg.Capacity
	switch {
	case c < 0 || c > MaxCapacity:
		panic(fmt.Sprintf("bus: Capacity %d outside [0, %d]", c, MaxCapacity))
	case c == 0:
		c = DefaultCapacity
	}
	c = max(c, MinCapacity)
	return uint64(1) << bits.Len64(uint64(c)-1) // round up to a power of two
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
	// Past this offset an empty ring starts again at offset 0 (rewind): a
	// cache batch, and never below the largest entry, so that a producer
	// that sees the rewind's tail before its head still finds room.
	b.rewindAt = max(cacheBatch, align8(uint64(b.maxRecord)+hdrSize))
	if cfg.Overflow != Block && cfg.Overflow != Drop {
		panic(fmt.Sprintf("bus: invalid Overflow %d", int(cfg.Overflow)))
	}
	if cfg.BlockTimeout < 0 || cfg.MaxLatency < 0 {
		panic(fmt.Sprintf("bus: negative BlockTimeout %v or MaxLatency %v", cfg.BlockTimeout, cfg.MaxLatency))
	}
	if cfg.MaxLatency == 0 {
		b.maxLatency = DefaultMaxLatency
	}
	switch hw := cfg.HighWatermark; {
	case hw == 0:
		b.wakeBytes = min(cacheBatch, b.capacity/4*3)
	case hw > 0 && hw <= 1: // also rejects NaN
		b.wakeBytes = uint64(hw * float64(b.capacity))
	default:
		panic(fmt.Sprintf("bus: HighWatermark %v not in (0, 1]", cfg.HighWatermark))
	}
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
