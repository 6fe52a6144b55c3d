package bus

import (
	"math"
	"time"
)

// What a batch may carry, from the output's measured rate: at most
// batchSpan of the output's time, and never less than minBatchBytes
// (unmeasuredBatchBytes until a rate is measured). Behind a slow output
// the ring's space then comes back a batch of a few milliseconds at a
// time, as the output takes bytes, not a ring's worth at once; a fast
// output's batches are bounded by the record target (Config.maxBatch) as
// before.
const (
	batchSpan            = 4 * time.Millisecond
	minBatchBytes        = 16 << 10
	unmeasuredBatchBytes = 64 << 10
	// rateWindow is how much writing time one rate sample spans: a
	// pipe takes a batch at memory speed while its buffer has room and
	// at its reader's pace once it is full, so single batches say little.
	rateWindow = 50 * time.Millisecond
)

// measure adds a batch that was written whole in elapsed ns (its calls,
// short writes and retries included) to the current sample; once the
// sample spans rateWindow of writing it goes into Bus.outRate: a slower
// sample sets it at once, a faster one moves it a quarter of the way. An
// Error wait made on a rate that is too high waits in vain; one skipped
// on a rate too low costs nothing.
func (d *drainer) measure(elapsed int64) {
	d.busyBytes += uint64(d.bytes)
	d.busyNs += max(elapsed, 0)
	if d.busyNs < int64(rateWindow) || d.busyBytes == 0 {
		return
	}
	sample := float64(d.busyBytes) * float64(time.Second) / float64(d.busyNs)
	d.busyBytes, d.busyNs = 0, 0
	rate := uint64(max(1, min(sample, math.MaxUint32*float64(1<<20)))) // far above any output; keeps the sum below in range
	if old := d.b.outRate.Load(); old != 0 && rate > old {             // atomic: the drainer is the only writer
		rate = (3*old + rate) / 4
	}
	d.b.outRate.Store(rate) // atomic: Error callers read it (writableWithin)
}

// batchCap is how many record bytes the next batch may carry: batchSpan
// at the measured rate, at least minBatchBytes; unmeasuredBatchBytes
// before a rate is measured.
func (d *drainer) batchCap() int {
	rate := d.b.outRate.Load() // atomic: stored by this goroutine (measure)
	if rate == 0 {
		return unmeasuredBatchBytes
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
