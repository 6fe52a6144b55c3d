package bus

import (
	"math"
	"time"
)

// What a batch may carry, from the output's measured rate (outrate.go):
// at most batchSpan of the output's time, and never less than
// minBatchBytes. Behind a slow output the ring's space then comes back a
// batch of a few milliseconds at a time, as the output takes bytes, not a
// ring's worth at once; a fast output's batches are bounded by the record
// target (Config.maxBatch) as before.
const (
	batchSpan     = 4 * time.Millisecond
	minBatchBytes = 16 << 10
)

// measure records the rate of a batch that was written whole in elapsed ns
// (its calls, short writes and retries included) in Bus.outRate, an
// exponentially weighted mean that follows a change within a few batches.
func (d *drainer) measure(elapsed int64) {
	if d.bytes == 0 || elapsed <= 0 {
		return
	}
	sample := float64(d.bytes) * float64(time.Second) / float64(elapsed)
	rate := uint64(min(sample, math.MaxUint32*float64(1<<20))) // far above any output; keeps the sum below in range
	if old := d.b.outRate.Load(); old != 0 {                   // atomic: the drainer is the only writer
		rate = (3*old + rate) / 4
	}
	d.b.outRate.Store(rate) // atomic: Error callers read it (writableWithin)
}

// batchCap is how many record bytes the next batch may carry: batchSpan
// at the measured rate, at least minBatchBytes; no cap before a rate is
// measured.
func (d *drainer) batchCap() int {
	rate := d.b.outRate.Load() // atomic: stored by this goroutine (measure)
	if rate == 0 {
		return math.MaxInt
	}
	span := float64(rate) * batchSpan.Seconds()
	if span >= float64(math.MaxInt/2) {
		return math.MaxInt
	}
	return max(minBatchBytes, int(span))
}

// writableWithin reports whether the output, at its measured rate, can
// write n more bytes within bound: true while no rate is measured yet.
func (b *Bus) writableWithin(n uint64, bound time.Duration) bool {
	rate := b.outRate.Load() // atomic: the drainer's store (measure)
	if rate == 0 {
		return true
	}
	return float64(n)/float64(rate) <= bound.Seconds()
}
