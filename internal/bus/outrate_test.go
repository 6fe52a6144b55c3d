package bus

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The batch cap and the Error wait's test follow the measured rate; with
// no rate measured yet nothing is capped and every wait may be made.
func TestOutputRateDecisions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rate     uint64
		cap      int // at least this; exactly this unless huge
		huge     bool
		writable uint64 // the most bytes writable within a second
	}{
		{"not measured", 0, math.MaxInt, false, math.MaxUint64},
		{"2 MB/s", 2_000_000, minBatchBytes, false, 2_000_000},
		{"100 MB/s", 100_000_000, 400_000, false, 100_000_000},
		{"beyond int on 32-bit", 1 << 50, 1 << 30, true, 1 << 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Bus{}
			b.d.b = b
			b.outRate.Store(tc.rate)
			if tc.huge {
				assert.GreaterOrEqual(t, b.d.batchCap(), tc.cap)
			} else {
				assert.Equal(t, tc.cap, b.d.batchCap())
			}
			assert.True(t, b.writableWithin(tc.writable, time.Second))
			if tc.writable != math.MaxUint64 {
				assert.False(t, b.writableWithin(tc.writable+tc.writable/100, time.Second))
			}
		})
	}
}

// measure keeps an exponentially weighted mean of whole batches' rates.
func TestMeasureOutputRate(t *testing.T) {
	b := &Bus{}
	b.d.b = b
	b.d.bytes = 1000
	b.d.measure(int64(time.Millisecond)) // 1 MB/s
	assert.EqualValues(t, 1_000_000, b.outRate.Load())
	b.d.measure(int64(time.Millisecond / 5)) // 5 MB/s: a quarter of the way
	assert.EqualValues(t, 2_000_000, b.outRate.Load())
	b.d.bytes = 0
	b.d.measure(int64(time.Millisecond)) // nothing written: no sample
	assert.EqualValues(t, 2_000_000, b.outRate.Load())
}
