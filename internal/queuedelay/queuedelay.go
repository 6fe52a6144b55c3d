// Package queuedelay measures how long records wait in a queue, per
// batch, with one clock read per drain round, never per record: an
// optional stage of the bus's drainer (Observe at the top of each round,
// Woke after a park, Written after each batch's write).
package queuedelay

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// The queue's delay: how long a batch's oldest record waited between its
// Enqueue and the output taking the batch, measured by the drainer per
// batch with one clock read per round, never per record (docs/design.md,
// The queue's delay).
//
// The drainer samples (tail, time) as it loads tail at the start of each
// round: a record reserved at position p >= tail was enqueued after that
// time. A batch's delay is taken from the last sample whose tail was at or
// below its first record's position: an upper bound, above the true wait
// by at most one round of the drainer (the write before, or an idle sleep
// of at most MaxLatency/2; a park ends when the record's producer wakes
// the drainer, so woke re-stamps the last sample).

// delaySamples is how many (tail, time) samples the drainer keeps: one per
// round whose records are not written yet. When the backlog spans more
// rounds, the newest rounds share the last sample (a larger upper bound).
const delaySamples = 64

// Histogram buckets: one below 2^delayMinOctave ns (about 1 µs), then
// delaySub per power of two up to 2^(delayMinOctave+delayOctaves) ns
// (about 73 minutes), the last bucket open-ended. A quantile is its
// bucket's upper bound: at most 25 % high.
const (
	delayMinOctave = 10
	delaySub       = 4
	delayOctaves   = 32
	delayBuckets   = delaySub*delayOctaves + 1
)

// delayDecay is how often the histogram halves its counts and starts a new
// max: its quantiles weigh the last few decays' batches, so they follow
// the recent delay rather than the whole run's.
const delayDecay = 10 * time.Second

type delaySample struct {
	tail uint64
	at   int64 // ns
}

// Delay is the drainer's (single writer) delay histogram; Stats reads it
// with atomic loads from any goroutine (the bus's protocol table has its
// rows). Times are ns on the caller's monotonic clock.
type Delay struct {
	samples [delaySamples]delaySample
	first   int // index of the oldest sample in use
	n       int // samples in use

	// Drainer-written, Stats-read: atomics (no ordering between them is
	// needed: a snapshot a batch apart is as good as an exact one).
	buckets   [delayBuckets]atomic.Uint64
	maxNow    atomic.Int64 // the largest delay since the last decay (ns)
	maxBefore atomic.Int64 // the largest delay in the decay period before
	decayAt   int64        // when the next decay is due (ns)
}

// Observe records that the drainer loaded tail at time now.
func (q *Delay) Observe(tail uint64, now int64) {
	if q.n > 0 {
		last := &q.samples[(q.first+q.n-1)%delaySamples]
		if tail <= last.tail {
			last.at = now // nothing new reserved since: a later, tighter time
			return
		}
		if q.n == delaySamples {
			return // full: records past the last sample share its time
		}
	}
	q.samples[(q.first+q.n)%delaySamples] = delaySample{tail, now}
	q.n++
}

// Woke re-stamps the last sample after a park, which the first producer
// to commit ends: no record was reserved long before now.
func (q *Delay) Woke(now int64) {
	if q.n > 0 {
		q.samples[(q.first+q.n-1)%delaySamples].at = now
	}
}

// Written records the delay of a batch whose first record was at position
// pos, taken by the output at time now.
func (q *Delay) Written(pos uint64, now int64) {
	// Samples wholly below pos are no use to later batches (their records
	// start at or after pos); keep the last one at or below pos.
	for q.n > 1 && q.samples[(q.first+1)%delaySamples].tail <= pos {
		q.first = (q.first + 1) % delaySamples
		q.n--
	}
	if q.n == 0 {
		return
	}
	d := max(now-q.samples[q.first].at, 0)
	q.buckets[delayBucket(d)].Add(1)
	if d > q.maxNow.Load() {
		q.maxNow.Store(d)
	}
	if now >= q.decayAt {
		q.decay(now)
	}
}

// decay halves the counts and moves the max on a period.
func (q *Delay) decay(now int64) {
	for i := range q.buckets {
		if c := q.buckets[i].Load(); c > 0 {
			q.buckets[i].Store(c / 2)
		}
	}
	q.maxBefore.Store(q.maxNow.Load())
	q.maxNow.Store(0)
	q.decayAt = now + int64(delayDecay)
}

// delayBucket is the bucket of a delay of d ns: 0 below 1024 ns, then
// delaySub per power of two, each [(delaySub+k)<<(o-2), (delaySub+k+1)<<(o-2)).
func delayBucket(d int64) int {
	if d < 1<<delayMinOctave {
		return 0
	}
	octave := bits.Len64(uint64(d)) - 1 // d in [2^octave, 2^(octave+1))
	if octave >= delayMinOctave+delayOctaves {
		return delayBuckets - 1
	}
	sub := int(uint64(d)>>(octave-2)) & (delaySub - 1)
	return 1 + (octave-delayMinOctave)*delaySub + sub
}

// delayUpper is the upper bound of bucket i.
func delayUpper(i int) time.Duration {
	if i == 0 {
		return 1 << delayMinOctave
	}
	i = min(i, delayBuckets-1) - 1
	octave, sub := delayMinOctave+i/delaySub, i%delaySub
	return time.Duration(delaySub+sub+1) << (octave - 2)
}

// Stats is the queue's recent delay: quantiles of the batches'
// delays (bucket upper bounds) and the largest, over the last 10-20 s.
type Stats struct {
	P50, P99, Max time.Duration
	Batches       uint64 // batches in the histogram (decayed counts)
}

// Stats returns the recent delay between a record's enqueue and the
// output taking it, per batch.
func (q *Delay) Stats() Stats {
	var counts [delayBuckets]uint64
	var total uint64
	for i := range counts {
		counts[i] = q.buckets[i].Load()
		total += counts[i]
	}
	s := Stats{Batches: total, Max: time.Duration(max(q.maxNow.Load(), q.maxBefore.Load()))}
	if total == 0 {
		return s
	}
	quantile := func(p float64) time.Duration {
		rank := max(uint64(math.Ceil(p*float64(total))), 1) // nearest rank
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				return min(delayUpper(i), max(s.Max, time.Microsecond))
			}
		}
		return s.Max
	}
	s.P50, s.P99 = quantile(0.50), quantile(0.99)
	return s
}
