package queuedelay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDelayBucketsBoundTheirDelays(t *testing.T) {
	prev := -1
	for d := time.Duration(0); d < time.Hour; d = d*9/8 + time.Nanosecond*7 {
		i := delayBucket(int64(d))
		require.GreaterOrEqual(t, i, prev, "buckets grow with the delay (%v)", d)
		prev = i
		up := delayUpper(i)
		assert.Greater(t, up, d, "bucket %d's bound %v is above %v", i, up, d)
		assert.LessOrEqual(t, float64(up), float64(d)*1.25+1024, "bucket %d: %v for %v", i, up, d)
	}
	assert.Equal(t, delayBuckets-1, delayBucket(int64(100*time.Hour)), "the last bucket is open-ended")
}

func TestQueueDelayIsAnUpperBoundFromTheSamples(t *testing.T) {
	ms := int64(time.Millisecond)
	q := &Delay{}
	q.decayAt = 1 << 62 // no decay in this test
	q.Observe(0, 0)     // round at 0 ms: nothing reserved
	q.Observe(0, 5*ms)  // round at 5 ms: still nothing; the later time is kept
	q.Observe(100, 6*ms)
	q.Observe(300, 40*ms)
	// The batch from position 0: reserved after 5 ms, written at 50 ms.
	q.Written(0, 50*ms)
	// The batch from position 100 (first seen at 6 ms, so reserved after
	// 5 ms... the sample at or below 100 is the one at 6 ms: after 6 ms).
	q.Written(100, 60*ms)
	// The batch from 300: after 40 ms.
	q.Written(300, 45*ms)
	s := q.Stats()
	assert.Equal(t, 54*time.Millisecond, s.Max)
	assert.EqualValues(t, 3, s.Batches)
	assert.Equal(t, delayUpper(delayBucket(45*ms)), s.P50, "the median of 5, 45 and 54 ms")
	assert.Equal(t, 54*time.Millisecond, s.P99, "capped at the max")
}

func TestQueueDelayParkRestamps(t *testing.T) {
	ms := int64(time.Millisecond)
	q := &Delay{}
	q.decayAt = 1 << 62
	q.Observe(0, 0)
	q.Woke(3600_000 * ms) // parked an hour; the record's producer woke it
	q.Observe(64, 3600_000*ms+ms/10)
	q.Written(0, 3600_001*ms)
	assert.Equal(t, time.Millisecond, q.Stats().Max, "not the hour it parked")
}

func TestQueueDelayDecays(t *testing.T) {
	ms := int64(time.Millisecond)
	q := &Delay{}
	q.Observe(0, 0)
	q.Written(0, 100*ms) // the first batch starts the decay period
	for range 8 {
		q.Observe(0, 200*ms)
		q.Written(0, 201*ms)
	}
	now := 200*ms + int64(delayDecay)
	q.Observe(0, now)
	q.Written(0, now+ms) // a new period: the old max moves to maxBefore
	q.Observe(0, 2*now)
	q.Written(0, 2*now+ms) // another: 100 ms is forgotten
	s := q.Stats()
	assert.Equal(t, time.Millisecond, s.Max)
	assert.Less(t, s.Batches, uint64(10), "counts were halved")
}
