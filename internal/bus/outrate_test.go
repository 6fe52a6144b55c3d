package bus

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The batch cap and the Error wait's test follow the measured rate; with
// no rate measured yet a batch is unmeasuredBatchBytes, and an Error
// record may wait behind any backlog (its wait is bounded).
func TestOutputRateDecisions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rate     uint64
		cap      int // at least this; exactly this unless huge
		huge     bool
		writable uint64 // the most bytes writable within a second; 0: any
	}{
		{"not measured", 0, unmeasuredBatchBytes, false, 0},
		{"500 kB/s", 500_000, minBatchBytes, false, 500_000},
		{"2 MB/s", 2_000_000, 8_000, false, 2_000_000},
		{"100 MB/s", 100_000_000, 400_000, false, 100_000_000},
		{"beyond int on 32-bit", 1 << 50, 1 << 30, true, 1 << 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Bus{}
			b.d.b = b
			b.outRate.Store(tc.rate)
			b.d.batchRate = tc.rate
			if tc.huge {
				assert.GreaterOrEqual(t, b.d.batchCap(), tc.cap)
			} else {
				assert.Equal(t, tc.cap, b.d.batchCap())
			}
			if tc.writable == 0 {
				assert.True(t, b.writableWithin(math.MaxUint64, time.Second))
				return
			}
			assert.True(t, b.writableWithin(tc.writable, time.Second))
			assert.False(t, b.writableWithin(tc.writable+tc.writable/100+1, time.Second))
		})
	}
}

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
