package bus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// measure samples the rate over rateWindow of writing time; the waits'
// pace is the slower of the last two samples, so that one fast sample
// never raises it; the mean that sizes batches moves a quarter of the way
// either way. Each sample, the first too, publishes
// the least time a call in it took.
func TestMeasureOutputRate(t *testing.T) {
	b := &Bus{}
	b.d.b = b
	batch := func(bytes int, d time.Duration) {
		b.d.bytes = bytes
		b.d.measure(int64(d), 1)
	}
	batch(1_000_000, 50*time.Millisecond)
	assert.EqualValues(t, 20_000_000, b.outRate.Load(), "the first sample alone")
	assert.EqualValues(t, 20_000_000, b.d.batchRate, "but sizes batches")
	b.d.batchRate = 1_000_000 // the rest of the test follows the mean from here
	assert.EqualValues(t, 50*time.Millisecond, b.callNs.Load(), "a call's time is published from the first sample")
	batch(10_000, 10*time.Millisecond)
	assert.EqualValues(t, 20_000_000, b.outRate.Load(), "10 ms of writing is no sample yet")
	assert.EqualValues(t, 50*time.Millisecond, b.callNs.Load(), "no sample yet")
	batch(40_000, 40*time.Millisecond) // 50,000 bytes in 50 ms
	assert.EqualValues(t, 1_000_000, b.outRate.Load())
	assert.EqualValues(t, 10*time.Millisecond, b.callNs.Load(), "the least call of the sample")
	batch(250_000, 50*time.Millisecond) // 5 MB/s: one fast sample
	assert.EqualValues(t, 1_000_000, b.outRate.Load(), "one fast sample does not raise the pace")
	assert.EqualValues(t, 50*time.Millisecond, b.callNs.Load(), "a whole sample of slower calls: at once")
	assert.EqualValues(t, 2_000_000, b.d.batchRate)
	b.d.bytes = 25_000
	b.d.measure(int64(50*time.Millisecond), 10) // 0.5 MB/s: at once, the batches' mean a quarter of the way
	assert.EqualValues(t, 500_000, b.outRate.Load())
	assert.EqualValues(t, 5*time.Millisecond, b.callNs.Load(), "ten calls in 50 ms")
	assert.EqualValues(t, 1_625_000, b.d.batchRate)
	batch(0, time.Second) // nothing written: no sample
	assert.EqualValues(t, 500_000, b.outRate.Load())
	batch(rateWindowBytes, time.Millisecond) // rateWindowBytes end a sample early: ~262 MB/s
	assert.EqualValues(t, 500_000, b.outRate.Load(), "one fast sample")
	batch(rateWindowBytes, time.Millisecond)
	assert.InDelta(t, 262_144_000, float64(b.outRate.Load()), 1_000, "two fast samples: the output is faster")
	batch(100_000, 40*time.Millisecond)
	assert.EqualValues(t, time.Millisecond, b.callNs.Load(), "no sample yet")
	batch(100_000, 40*time.Millisecond) // a sample of 40 ms calls: the output slowed
	assert.EqualValues(t, 40*time.Millisecond, b.callNs.Load())
	batch(100_000, 40*time.Millisecond)
	batch(100_000, time.Millisecond)
	batch(100_000, 40*time.Millisecond) // one fast call in the sample: it is the cost
	assert.EqualValues(t, time.Millisecond, b.callNs.Load())
}
