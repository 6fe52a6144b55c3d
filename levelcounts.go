package asyncbus

import (
	"log/slog"
	"runtime"
	"sync/atomic"
)

// The buckets of the per-level counts (Stats.LoggedTrace and the fields
// after it): each named level counts its records and those up to the next
// named level; bucketOther holds the levels below LevelTrace.
const (
	bucketTrace = iota // [LevelTrace, Debug)
	bucketDebug        // [Debug, Info): logr's V(1) to V(4)
	bucketInfo         // [Info, Warn)
	bucketWarn         // [Warn, Error)
	bucketError        // [Error, LevelFatal)
	bucketFatal        // LevelFatal and above
	bucketOther        // below LevelTrace
	levelBuckets
)

// bucketOf returns the bucket of level l.
func bucketOf(l slog.Level) int {
	switch {
	case l < LevelTrace:
		return bucketOther
	case l >= LevelFatal:
		return bucketFatal
	}
	return int(l-LevelTrace) >> 2 // the named levels are 4 apart from Trace to Fatal
}

// levelStripe is one stripe of the per-level counts, 128 bytes: no two
// stripes share a cache line, or the pair of lines that adjacent-line
// prefetchers fetch together, wherever the slice starts.
type levelStripe struct {
	n [levelBuckets]atomic.Uint64
	_ [128 - levelBuckets*8]byte
}

// levelCounts are one handler tree's per-level counts, striped so that
// goroutines logging at once add to different cache lines. The stripe is
// the buffer's (buffer.stripe): buffers come from a sync.Pool, whose
// per-P caches hand each P its own few buffers, so concurrent records
// mostly use different stripes; a buffer that meets another goroutine on
// its stripe moves to another (see add).
type levelCounts struct {
	stripes []levelStripe
	mask    uint32
}

// newLevelCounts returns counts with twice as many stripes as GOMAXPROCS
// now, a power of two from 8 to 64 (1 to 8 KiB).
func newLevelCounts() *levelCounts {
	n := 8
	for n < 2*runtime.GOMAXPROCS(0) && n < 64 {
		n *= 2
	}
	return &levelCounts{stripes: make([]levelStripe, n), mask: uint32(n - 1)}
}

// stripeSeed numbers the buffers as bufPool makes them, so that buffers
// made one after the other start on different stripes.
var stripeSeed atomic.Uint32

// newStripe returns the first stripe of a new buffer (never zero, which
// nextStripe would keep at zero).
func newStripe() uint32 {
	s := stripeSeed.Add(1) * 2654435769 // odd: buffers made in a row differ in the low bits
	if s == 0 {
		s = 1
	}
	return s
}

// nextStripe moves a stripe elsewhere (xorshift32: nonzero stays nonzero).
func nextStripe(s uint32) uint32 {
	s ^= s << 13
	s ^= s >> 17
	s ^= s << 5
	return s
}

// add counts one record at l on b's stripe. b belongs to the caller until
// it is released, so its stripe is the caller's to change: a failed
// compare-and-swap means another goroutine added to the same counter at the
// same moment, and b moves to another stripe for its next record, so that
// colliding goroutines spread out (as java.util.concurrent's LongAdder
// rehashes a thread's probe). The count itself is never lost: the add
// after a failed swap is unconditional.
func (c *levelCounts) add(l slog.Level, b *buffer) {
	n := &c.stripes[b.stripe&c.mask].n[bucketOf(l)]
	// Load and CompareAndSwap: atomic, as other goroutines may share the
	// stripe; only Stats reads the sums, which need no ordering.
	if old := n.Load(); !n.CompareAndSwap(old, old+1) {
		b.stripe = nextStripe(b.stripe)
		n.Add(1)
	}
}

// addStats fills the Logged fields of st with the sums over the stripes.
func (c *levelCounts) addStats(st *Stats) {
	var sum [levelBuckets]uint64
	for i := range c.stripes {
		for j := range sum {
			sum[j] += c.stripes[i].n[j].Load()
		}
	}
	st.LoggedTrace = sum[bucketTrace]
	st.LoggedDebug = sum[bucketDebug]
	st.LoggedInfo = sum[bucketInfo]
	st.LoggedWarn = sum[bucketWarn]
	st.LoggedError = sum[bucketError]
	st.LoggedFatal = sum[bucketFatal]
	st.LoggedOther = sum[bucketOther]
}
