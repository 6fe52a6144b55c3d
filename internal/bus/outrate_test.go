package bus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// measure samples the rate over rateWindow of writing time, drops the
// first sample, follows a slower output at once and a faster one a
// quarter of the way per sample; the mean that sizes batches moves a
// quarter of the way either way.
func TestMeasureOutputRate(t *testing.T) {
	b := &Bus{}
	b.d.b = b
	batch := func(bytes int, d time.Duration) {
		b.d.bytes = bytes
		b.d.measure(int64(d))
	}
	batch(1_000_000, 50*time.Millisecond)
	assert.Zero(t, b.outRate.Load(), "the first sample (a pipe's buffer filling) is not used for Error waits")
	assert.EqualValues(t, 20_000_000, b.d.batchRate, "but sizes batches")
	b.d.batchRate = 1_000_000 // the rest of the test follows the mean from here
	batch(10_000, 10*time.Millisecond)
	assert.Zero(t, b.outRate.Load(), "10 ms of writing is no sample yet")
	batch(40_000, 40*time.Millisecond) // 50,000 bytes in 50 ms
	assert.EqualValues(t, 1_000_000, b.outRate.Load())
	batch(250_000, 50*time.Millisecond) // 5 MB/s: a quarter of the way
	assert.EqualValues(t, 2_000_000, b.outRate.Load())
	assert.EqualValues(t, 2_000_000, b.d.batchRate)
	batch(25_000, 50*time.Millisecond) // 0.5 MB/s: at once, the batches' mean a quarter of the way
	assert.EqualValues(t, 500_000, b.outRate.Load())
	assert.EqualValues(t, 1_625_000, b.d.batchRate)
	batch(0, time.Second) // nothing written: no sample
	assert.EqualValues(t, 500_000, b.outRate.Load())
	batch(rateWindowBytes, time.Millisecond) // rateWindowBytes end a sample early: ~262 MB/s, a quarter of the way
	assert.InDelta(t, 500_000+(262_144_000-500_000)/4, float64(b.outRate.Load()), 1_000)
}
