package bus

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlush(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
		require.NoError(t, b.Flush(context.Background()))
		require.Len(t, sink.records(), i+1, "everything before Flush is written")
	}
	sink.mu.Lock()
	require.GreaterOrEqual(t, sink.syncs, 10, "Flush syncs a Syncer")
	sink.mu.Unlock()
	closeBus(t, b)
	require.NoError(t, b.Flush(context.Background()), "Flush after Close")
	requireAccounting(t, b.Stats())
}

func TestFlushHonoursContext(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	require.NoError(t, b.Enqueue(payload(1, 10)))
	<-sink.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Flush(ctx), context.Canceled)
	close(sink.gate)
	closeBus(t, b)
}

// TestFlushAfterCloseRetainsNothing: Flush after Close returns Close's
// result and leaves no request behind.
func TestFlushAfterCloseRetainsNothing(t *testing.T) {
	b, err := testNew(io.Discard, Config{Capacity: 4096})
	require.NoError(t, err)
	require.NoError(t, b.Close(context.Background()))
	for range 10000 {
		require.NoError(t, b.Flush(context.Background()))
	}
	b.mu.Lock()
	n := len(b.flushReqs)
	b.mu.Unlock()
	assert.Zero(t, n)
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
	var se *OutputError
	require.ErrorAs(t, err, &se, "Flush returns while the batch is retried")
	assert.ErrorIs(t, err, errDown)
	assert.True(t, se.Retrying)
	assert.ErrorIs(t, err, ErrRetrying)
	assert.Zero(t, se.Failed)
	assert.Contains(t, err.Error(), "retried")
	assert.GreaterOrEqual(t, sink.calls.Load(), int64(DefaultWriteAttempts), "the default budget was spent first")

	require.NoError(t, b.EnqueueWritten(payload(1, 10)), "the output is failing: the Error wait is skipped, the record queued")

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
	require.NoError(t, b.waitWritten(context.Background(), written, syncCall))
	assert.Greater(t, sink.syncs.Load(), syncs, "it was synced before the answer")

	sink.down.Store(false)
	waitFor(t, "the retried record written", func() bool { return sink.count() == 2 })
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}

func TestCloseDuringProduction(t *testing.T) {
	for _, mode := range []Overflow{Block, Drop} {
		t.Run(mode.String(), func(t *testing.T) {
			const producers = 8
			sink := &checkSink{next: make([]int, producers)}
			b := newTestBus(t, sink, Config{Capacity: 4096, Overflow: mode}, nil)
			var accepted, closedErrs [producers]int
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					var buf []byte
					for s := 0; ; {
						buf = rec(buf, p, s, 40)
						switch err := b.Enqueue(buf); {
						case err == nil:
							accepted[p]++
							s++
						case errors.Is(err, ErrDropped):
							// Drop mode: the ring was full; try the same seq again.
						case errors.Is(err, ErrClosed):
							closedErrs[p]++
							if closedErrs[p] == 3 {
								return
							}
						default:
							t.Errorf("unexpected error %v", err)
							return
						}
					}
				})
			}
			waitFor(t, "some records written", func() bool { return b.Stats().Written > 2000 })
			var cw sync.WaitGroup
			for range 3 { // Close from several goroutines at once
				cw.Go(func() { assert.NoError(t, b.Close(context.Background())) })
			}
			cw.Wait()
			wg.Wait()
			require.NoError(t, sink.err)
			st := b.Stats()
			requireAccounting(t, st)
			var total, closed int
			for p := range producers {
				require.Equal(t, accepted[p], sink.next[p], "producer %d: every accepted record written", p)
				total += accepted[p]
				closed += closedErrs[p]
			}
			require.EqualValues(t, total, st.Written)
			require.EqualValues(t, closed, st.DroppedClosed)
			require.NoError(t, b.Close(context.Background()), "idempotent")
			require.ErrorIs(t, b.Enqueue([]byte("late\n")), ErrClosed)
			require.EqualValues(t, closed+1, b.Stats().DroppedClosed)
		})
	}
}
