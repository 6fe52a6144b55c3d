package bus

import (
	"math"
	"time"
)

// What a batch may carry, from the output's measured rate: at most
// batchSpan of the output's time (unmeasuredBatchBytes until a rate is
// measured), and never less than minBatchBytes. Behind a slow output the ring's
// space then comes back a batch of a few milliseconds at a time, as the
// output takes bytes, not a ring's worth at once, and a moving output's
// calls stay far below StuckAfter; a fast output's batches are bounded by
// maxBatch records and, for a plain writer, cacheBatch.
const (
	// batchSpan (derived, 3.125 ms): a batch's call reaches StuckAfter only if the output slows sixteenfold in it.
	batchSpan = StuckAfter / 16
	// minBatchBytes: a page, what a pipe takes per reader's read; an
	// output whose cost is per call (a network round trip) still gets
	// batches of many records.
	minBatchBytes = 4 << 10
	// unmeasuredBatchBytes: a quarter of cacheBatch, so that a first batch
	// into a 2 MB/s pipe takes 32 ms, within StuckAfter.
	unmeasuredBatchBytes = cacheBatch / 4
	// rateWindow is how much writing time one rate sample spans, or
	// rateWindowBytes how many bytes, whichever comes first (a fast output
	// takes 256 KiB in well under a millisecond): a pipe takes a batch
	// at memory speed while its buffer has room and at its reader's pace
	// once it is full, so single batches say little. StuckAfter: the
	// longest a call into a moving output takes, so a sample spans
	// several calls.
	rateWindow      = StuckAfter
	rateWindowBytes = cacheBatch
)

// measure adds a batch that was written whole in elapsed ns (its calls,
// short writes and retries included) to the current sample; once the
// sample spans rateWindow of writing or rateWindowBytes it goes into the
// batches' mean (d.batchRate), and Bus.outRate becomes the slower of it
// and the last sample, so that one fast sample (a pipe's buffer filling)
// never raises the waits' pace (docs/design.md, One writer). Each sample
// also publishes the least time a call in it took (Bus.callNs).
func (d *drainer) measure(elapsed int64, calls uint64) {
	if d.bytes == 0 {
		return // a batch of markers only, or of empty records: it says nothing of the rate
	}
	elapsed = max(elapsed, 1)
	d.busyBytes += uint64(d.bytes)
	d.busyNs += elapsed
	// A call's cost: the least a call in the sample took (docs/design.md).
	if c := elapsed / int64(max(calls, 1)); d.callMin == 0 || c < d.callMin {
		d.callMin = c
	}
	if d.busyNs < int64(rateWindow) && d.busyBytes < rateWindowBytes {
		return
	}
	d.b.callNs.Store(d.callMin) // atomic, row callNs: the drainer is its only writer
	d.callMin = 0
	sample := float64(d.busyBytes) * float64(time.Second) / float64(d.busyNs)
	d.busyBytes, d.busyNs = 0, 0
	rate := uint64(max(1, min(sample, math.MaxUint32*float64(1<<20)))) // far above any output; keeps the sums below in range
	// The batch cap follows a plain weighted mean, from the first sample
	// on: one slow sample (the drainer descheduled mid-write on a busy
	// machine) must not shrink a fast output's batches, which costs
	// throughput and, in Drop mode, records.
	if d.batchRate == 0 {
		d.batchRate = rate
	} else {
		d.batchRate = (3*d.batchRate + rate) / 4
	}
	pace := rate
	if d.lastRate != 0 {
		pace = min(rate, d.lastRate)
	}
	d.lastRate = rate
	d.b.outRate.Store(pace) // atomic, row outRate: the drainer is its only writer; waits read it (hopeless)
}

// batchCap is how many record bytes the next batch may carry: batchSpan
// at the measured rate (its mean, d.batchRate), unmeasuredBatchBytes
// before a rate is measured; at most cacheBatch for a plain writer (its
// staging buffer's size).
func (d *drainer) batchCap() int {
	limit := math.MaxInt
	if d.b.kind == outputCopy {
		limit = cacheBatch
	}
	rate := d.batchRate
	if rate == 0 {
		return min(limit, unmeasuredBatchBytes)
	}
	return int(min(float64(limit), max(minBatchBytes, float64(rate)*batchSpan.Seconds())))
}
