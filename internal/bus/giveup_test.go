package bus

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingHung is a hungWriter that counts the calls that started.
type countingHung struct {
	*hungWriter
	calls atomic.Int32
}

func (w *countingHung) Write(p []byte) (int, error) {
	w.calls.Add(1)
	return w.hungWriter.Write(p)
}

// awaitAll fails the test if the goroutines of wg have not all returned
// within a generous bound: a failure bound, not synchronisation.
func awaitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after Close gave up", what)
	}
}

func TestCloseHonoursContext(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	require.NoError(t, b.Enqueue(payload(1, 10)))
	<-sink.entered
	for i := range 5 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Close(ctx), context.Canceled)
	// The books are final before Close returns, with the drainer still in
	// the sink's call: the record in that call counts as failed too.
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 0, st.Written)
	require.EqualValues(t, 6, st.Failed)
	close(sink.gate)
	<-b.done // the call returns; the drainer exits and counts nothing more
	after := b.Stats()
	require.Equal(t, [4]uint64{st.Enqueued, st.Written, st.Failed, st.Dropped},
		[4]uint64{after.Enqueued, after.Written, after.Failed, after.Dropped}, "the books stay as Close left them")
}

// A Close whose deadline expires while the drainer is stuck in the output:
// every waiting producer returns at once, every record is counted (the
// books balance before Close returns and stay balanced), and no call into
// the output starts afterwards. In both overflow modes.
func TestCloseGiveUpReleasesEveryWaiterAndBalances(t *testing.T) {
	for _, mode := range []Overflow{Block, Drop} {
		t.Run(mode.String(), func(t *testing.T) {
			w := &countingHung{hungWriter: newHungWriter()}
			b := newTestBus(t, w, Config{Capacity: 4096, Overflow: mode, QuietWait: true}, nil)
			const producers, each, errorWaiters, errorEach = 8, 100, 2, 5
			var accepted, refused atomic.Int64
			count := func(err error) {
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, ErrDropped), errors.Is(err, ErrClosed):
					refused.Add(1)
				default: // an Error record answered by the give-up: accepted, counted as failed
					accepted.Add(1)
				}
			}
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := range each {
						count(b.Enqueue(payload(p*each+i, 100)))
					}
				})
			}
			for range errorWaiters {
				wg.Go(func() {
					for i := range errorEach {
						count(b.EnqueueWritten(payload(i, 100)))
					}
				})
			}
			<-w.entered // the drainer is in the output, for good
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			require.ErrorIs(t, b.Close(ctx), context.DeadlineExceeded)
			callsAtClose := w.calls.Load()
			st := b.Stats()
			awaitAll(t, &wg, "producers")
			total := uint64(producers*each + errorWaiters*errorEach)
			require.EqualValues(t, total, accepted.Load()+refused.Load())
			after := b.Stats()
			assert.Equal(t, total, after.Written+after.Dropped+after.Failed, "every record counted: %+v", after)
			assert.Equal(t, after.Enqueued, after.Written+after.Dropped+after.Failed)
			assert.Equal(t, st.Written+st.Failed, after.Written+after.Failed,
				"records accepted before Close were counted before it returned")
			assert.Zero(t, after.QueueDepth)

			close(w.gate) // the output answers at last
			<-b.done
			final := b.Stats()
			assert.Equal(t, [3]uint64{after.Written, after.Dropped, after.Failed},
				[3]uint64{final.Written, final.Dropped, final.Failed}, "the books stay as Close left them")
			assert.Equal(t, callsAtClose, w.calls.Load(), "no call into the output started after Close returned")
			require.Error(t, b.Flush(context.Background()), "Flush after the give-up reports the failed records")
		})
	}
}

// Shutdown does not wait on callers waiting for their record's write: a
// Close that gives up on a hung output answers an Error caller still
// waiting (EnqueueWritten returns), and never waits for it.
func TestCloseGivesUpAnswersErrorWaiters(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{}, patient)
	require.NoError(t, b.Enqueue(payload(0, 50)))
	<-w.entered // the drainer is stuck in the output
	var wg sync.WaitGroup
	var waitErr error
	wg.Go(func() { waitErr = b.EnqueueWritten(payload(1, 50)) })
	waitFor(t, "the Error record waits for its write", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.flushReqs) > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Close(ctx), context.DeadlineExceeded)
	awaitAll(t, &wg, "the Error caller")
	var se *OutputError
	require.ErrorAs(t, waitErr, &se, "answered with the give-up's count")
	close(w.gate)
	requireAccounting(t, b.Stats())
}
