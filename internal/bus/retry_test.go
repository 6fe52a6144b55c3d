package bus

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// TestRaisedBudgetDoesNotHoldWaiters: with WriteAttempts far above the
// default, a Flush and a record written before its call returns
// (EnqueueWritten) get the output's error once the default budget is
// spent, marked as still retrying, while their records stay queued; when
// the output comes back they are written, none failed.
func TestRaisedBudgetDoesNotHoldWaiters(t *testing.T) {
	sink := &switchSink{}
	sink.down.Store(true)
	b := newTestBus(t, sink, Config{Capacity: 4096, WriteAttempts: 1 << 20, RetryMax: time.Millisecond}, nil)

	require.NoError(t, b.Enqueue(payload(0, 10)))
	err := b.Flush(context.Background())
	var se *SinkError
	require.ErrorAs(t, err, &se, "Flush returns while the batch is retried")
	assert.ErrorIs(t, err, errDown)
	assert.True(t, se.Retrying)
	assert.ErrorIs(t, err, ErrRetrying)
	assert.Zero(t, se.Failed)
	assert.Contains(t, err.Error(), "retried")
	assert.GreaterOrEqual(t, sink.calls.Load(), int64(DefaultWriteAttempts), "the default budget was spent first")

	err = b.EnqueueWritten(payload(1, 10))
	require.ErrorAs(t, err, &se, "a record that waits for its write is answered too")
	assert.True(t, se.Retrying)

	st := b.Stats()
	assert.Zero(t, st.Failed, "nothing given up: the budget is not spent")
	assert.Zero(t, st.Written)

	sink.down.Store(false)
	// The retry after the next back-off writes them (a Flush racing with
	// the last failing attempt could still get that attempt's answer).
	waitFor(t, "the queued records written", func() bool { return sink.count() == 2 })
	require.NoError(t, b.Flush(context.Background()))
	closeBus(t, b)
	st = b.Stats()
	assert.Zero(t, st.Failed)
	assert.EqualValues(t, 2, st.Written)
	requireAccounting(t, st)
}

// TestWrittenRequestAnsweredDuringRetries: a Sync whose records were all
// written before the batch now being retried gets its usual answer (nil,
// after a sync), not the retrying error, even when the drainer takes it
// only during those retries.
func TestWrittenRequestAnsweredDuringRetries(t *testing.T) {
	sink := &switchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096, WriteAttempts: 1 << 20, RetryMax: time.Millisecond}, nil)
	require.NoError(t, b.Enqueue(payload(0, 10)))
	require.NoError(t, b.Flush(context.Background()))
	written := b.tail.Load() // everything below is written
	syncs := sink.syncs.Load()

	sink.down.Store(true)
	require.NoError(t, b.Enqueue(payload(1, 10)))
	require.ErrorContains(t, b.Flush(context.Background()), "retried", "the second batch is being retried")
	// A request for the first record only, taken while the second batch is retried.
	require.NoError(t, b.wait(context.Background(), written, true, false, 0))
	assert.Greater(t, sink.syncs.Load(), syncs, "it was synced before the answer")

	sink.down.Store(false)
	waitFor(t, "the retried record written", func() bool { return sink.count() == 2 })
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}
