package bus

import (
	"context"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigValidation: the root package validates options, so the bus
// panics on a value validation should have excluded (programmer error).
func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		w    io.Writer
		cfg  Config
		msg  string
	}{
		{"nil writer", nil, Config{}, "nil writer"},
		{"no marker", io.Discard, Config{DropMarker: nil}, "DropMarker"},
		{"negative capacity", io.Discard, Config{Capacity: -1}, "Capacity"},
		{"huge capacity", io.Discard, Config{Capacity: MaxCapacity + 1}, "Capacity"},
		{"negative maxRecord", io.Discard, Config{maxRecord: -1}, "maxRecord"},
		{"maxRecord too big", io.Discard, Config{Capacity: 1024, maxRecord: 600}, "maxRecord"},
		{"bad overflow", io.Discard, Config{Overflow: 7}, "invalid Overflow"},
		{"negative timeout", io.Discard, Config{BlockTimeout: -1}, "BlockTimeout"},
		{"negative latency", io.Discard, Config{MaxLatency: -1}, "MaxLatency"},
		{"watermark > 1", io.Discard, Config{HighWatermark: 1.5}, "HighWatermark"},
		{"watermark < 0", io.Discard, Config{HighWatermark: -0.1}, "HighWatermark"},
		{"batch order", io.Discard, Config{minBatch: 100, maxBatch: 10}, "minBatch"},
		{"negative batch", io.Discard, Config{minBatch: -1}, "minBatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if tc.name != "no marker" {
				cfg = withMarker(cfg)
			}
			defer func() {
				r := recover()
				require.NotNil(t, r, "New must panic")
				require.Contains(t, fmt.Sprint(r), tc.msg)
			}()
			_, _ = New(tc.w, cfg)
		})
	}

	t.Run("defaults", func(t *testing.T) {
		b, err := testNew(io.Discard, Config{Capacity: 1000})
		require.NoError(t, err)
		require.EqualValues(t, 1024, b.capacity)
		require.Equal(t, 128, b.maxRecord)
		require.Equal(t, DefaultMaxLatency, b.maxLatency)
		require.EqualValues(t, 768, b.wakeBytes, "three quarters of a ring smaller than cacheBatch")
		require.Equal(t, DefaultMinBatch, b.minBatch)
		require.Equal(t, 1024/hdrSize, b.maxBatch, "a 1 KiB ring holds at most 128 entries: MaxBatch is clamped to that")
		closeBus(t, b)
		b, err = testNew(io.Discard, Config{})
		require.NoError(t, err)
		require.EqualValues(t, DefaultCapacity, b.Stats().Capacity)
		require.EqualValues(t, cacheBatch, b.wakeBytes, "a fixed backlog, not a fraction of the ring")
		require.Equal(t, DefaultMaxBatch, b.maxBatch)
		closeBus(t, b)
	})
}

func TestOverflowString(t *testing.T) {
	for o, s := range map[Overflow]string{Block: "Block", Drop: "Drop", 9: "Overflow(9)"} {
		require.Equal(t, s, o.String())
	}
}

// TestHugeMaxBatchIsClamped: an absurd MaxBatch is clamped to the number of
// entries the ring can hold instead of making New allocate for it (or panic).
func TestHugeMaxBatchIsClamped(t *testing.T) {
	for _, mb := range []int{math.MaxInt, min(1<<34, math.MaxInt)} { // 1<<34 overflows a 32-bit int
		b, err := testNew(io.Discard, Config{Capacity: 4096, maxBatch: mb, minBatch: mb})
		require.NoError(t, err)
		assert.LessOrEqual(t, b.maxBatch, 4096/hdrSize)
		assert.LessOrEqual(t, b.minBatch, b.maxBatch)
		require.NoError(t, b.Enqueue([]byte("x\n")))
		require.NoError(t, b.Close(context.Background()))
		assert.EqualValues(t, 1, b.Stats().Written)
	}
}

// TestRetryConfig: Config.WriteAttempts and RetryMax reach the drainer; a
// RetryMax below the 1 ms base is the back-off itself.
func TestRetryConfig(t *testing.T) {
	tests := []struct {
		name            string
		attempts        int
		max             time.Duration
		wantAttempts    int
		wantBase, wantM time.Duration
	}{
		{"defaults", 0, 0, DefaultWriteAttempts, time.Millisecond, DefaultRetryMax},
		{"raised", 50, 5 * time.Second, 50, time.Millisecond, 5 * time.Second},
		{"below the base", 3, 100 * time.Microsecond, 3, 100 * time.Microsecond, 100 * time.Microsecond},
		{"negative means default", -1, -time.Second, DefaultWriteAttempts, time.Millisecond, DefaultRetryMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBus(t, &batchSink{}, Config{Capacity: 4096, WriteAttempts: tt.attempts, RetryMax: tt.max}, nil)
			defer closeBus(t, b)
			assert.Equal(t, tt.wantAttempts, b.retries)
			assert.Equal(t, tt.wantBase, b.retryBase)
			assert.Equal(t, tt.wantM, b.retryMax)
		})
	}
}
