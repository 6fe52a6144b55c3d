package bus

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/outputcall"
	"github.com/asyncbus/asyncbus/internal/reporter"
	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
)

var (
	// ErrClosed is returned by Enqueue after Close (counted as dropped, and in
	// Stats.DroppedClosed).
	ErrClosed = errors.New("bus closed")
	// ErrDropped is returned in Drop mode when the ring is full, or in Block
	// mode when Config.BlockTimeout expired; the record is counted as dropped.
	ErrDropped = errors.New("ring full, record dropped")
)

// cacheLine is the padding unit between groups of fields written by different
// goroutines. 128 rather than 64: x86's adjacent-line prefetcher pulls lines in
// 128-byte pairs, and Apple/ARM big cores use 128-byte lines.
const cacheLine = 128

type pad [cacheLine]byte

// Bus is the asynchronous record bus: many goroutines call Enqueue, one
// drainer goroutine writes to the output, and it alone calls the output.
// All methods are safe for concurrent use. It is made of one part per
// concern, each a type with its own protocol table (see the package
// documentation): the ring, the drainer's idle strategy, what callers read
// of the output (outputWatch), the drainer's published counters, the
// give-up, and the durable ring file.
type Bus struct {
	// Read-only after New; shared by all goroutines without synchronisation.
	w            io.Writer
	maxRecord    int
	wakeBytes    uint64 // the backlog that wakes a sleeping drainer (see cacheBatch)
	rewindAt     uint64 // the offset from which an empty ring starts again at offset 0 (rewind)
	overflow     Overflow
	blockTimeout time.Duration
	maxLatency   time.Duration
	minBatch     int
	maxBatch     int
	onError      func(error)
	dropMarker   func([]byte, uint64) []byte
	done         chan struct{} // closed when the drainer goroutine has returned
	retryBase    time.Duration
	retryMax     time.Duration
	retries      int    // attempts per batch before its remaining records count as failed
	output       string // the output's name in error reports (see outputName)
	kind         outputKind
	file         *ringfile.File // non-nil for a file-backed ring: producers add checksums, the drainer persists its cursors
	mapped       *mapping       // non-nil when the ring is a mapping outside the heap (mapRing): released by the drainer at its end
	recovered    uint64         // Stats.Recovered, set before the drainer starts
	unrecovered  uint64         // Stats.Unrecovered, likewise
	quietWaits   bool           // Config.QuietWait, without a ring file: records behind a short queue wait for their write
	quietWait    waitSpec       // the quiet wait: bound MaxLatency, the longest a committed record waits anyway, at most DefaultMaxLatency
	stopped      chan struct{}  // closed once the books are final: every record written or counted, every waiter answered

	// The ring: its memory and the cursors tail and head, each on its own
	// cache line (see ring).
	ring
	// lineBytes is the room the Block producers in line for room need
	// (Bus.line, their entries): every producer loads it before reserving,
	// and it is stored only when the ring was full, so it shares head's
	// read-mostly line.
	lineBytes atomic.Uint64
	_         pad
	// The drainer's idle strategy: its state word, written on every idle
	// transition, has its own line (see idleStrategy).
	idleStrategy
	_ pad
	// What callers read of the output: the call in flight, the pace, the
	// quiet wait's rate limit (see outputWatch).
	outputWatch
	_ pad
	// Slow-path shared words: written only on drops, oversize records,
	// blocking and flush requests, never on the fast path.
	dropped       atomic.Uint64 // a count (Add); includes droppedClosed
	droppedClosed atomic.Uint64 // a count, added after dropped: Stats never sees more closed than dropped
	gapPos        atomic.Uint64 // lowest pending gap (see drop), stored under dropMu, MaxUint64 = none: one load per entry finds it
	oversize      atomic.Uint64 // a count (Add)
	oversizeBytes atomic.Int64  // heap bytes of oversize records not yet written: a stale value only delays a record
	waiters       atomic.Int32  // producers parked in Block mode: loaded after the head store (see waitForRoom)
	flushPending  atomic.Bool   // stored after the request is appended under mu: the drainer then takes the list
	_             pad
	// The counters and measurements the drainer publishes (see drainerStats).
	drainerStats
	_ pad

	dropMu sync.Mutex // guards gaps
	gaps   []gap      // pending drop gaps by ring position, ascending
	// gapsFinal is set, under dropMu, by the drainer's last takeGaps: a
	// drop registered after it could never get its marker, so it counts as
	// refused after Close instead.
	gapsFinal bool

	mu        sync.Mutex    // guards spaceCh, flushReqs, side, line, slots
	line      []*roomWaiter // Block producers waiting for room, in arrival order (roomline.go)
	spaceCh   chan struct{} // closed (and replaced) by the drainer to wake parked Block producers
	flushReqs []flushReq
	side      map[uint64][]byte // oversize records by ring position
	slots     []*waitSlot       // free answer channels and timers for waits (waitWritten)

	closeOnce sync.Once
	closeErr  error // set before stopped is closed, by the drainer or by a Close that gave up
	// The give-up of a Close whose context ended (see giveUpState).
	giveUpState
	rep reporter.Reporter // runs OnError off the drainer

	d drainer // drainer-private state

	// seq numbers records (Config.Sequence, seq.go): the drainer alone
	// uses it, as it collects records in ring order.
	seq seqnum.State
}

// outputName names w in error reports: the path of a file output (a Path
// method, as filesink.File has), the name of an *os.File, or w's type.
func outputName(w io.Writer) string {
	switch o := w.(type) {
	case interface{ Path() string }:
		if p, ok := outputcall.Path(o); ok {
			return p
		}
	case interface{ Name() string }:
		return o.Name()
	}
	return fmt.Sprintf("%T", w)
}

// Output is the output's name in error reports.
func (b *Bus) Output() string { return b.output }

func chanClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
