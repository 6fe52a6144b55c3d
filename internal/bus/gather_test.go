package bus

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clockSink is a BatchWriter whose every call takes `took` on a fake clock
// (the drainer's d.now), and which holds its first call until gate closes.
type clockSink struct {
	batchSink
	clock *atomic.Int64
	took  time.Duration
}

func (s *clockSink) WriteBatch(recs [][]byte) (int, error) {
	s.clock.Add(int64(s.took))
	return s.batchSink.WriteBatch(recs)
}

// TestGatherAfterSlowWriteKeepsMaxLatency: after a small round whose write
// took W, the drainer gathers the next batch for at most MaxLatency-W (and
// never more than MaxLatency/2), so a record committed just after that
// round's collect still has its write started within MaxLatency. The write
// time comes from a fake clock, so the figures are exact.
func TestGatherAfterSlowWriteKeepsMaxLatency(t *testing.T) {
	const maxLatency = 20 * time.Millisecond
	for _, tc := range []struct {
		took, want time.Duration
	}{
		{took: 14 * time.Millisecond, want: 6 * time.Millisecond}, // MaxLatency - W
		{took: 2 * time.Millisecond, want: 10 * time.Millisecond}, // capped at MaxLatency/2
		{took: 25 * time.Millisecond, want: 0},                    // no time left: no wait
	} {
		t.Run(tc.took.String(), func(t *testing.T) {
			var clock atomic.Int64
			sink := &clockSink{clock: &clock, took: tc.took}
			sink.gate, sink.entered = make(chan struct{}), make(chan struct{}, 1)
			b := newTestBus(t, sink, Config{Capacity: 1 << 16, MaxLatency: maxLatency}, func(b *Bus) {
				b.d.now = func() time.Time { return time.Unix(0, clock.Load()) }
			})
			require.NoError(t, b.Enqueue(payload(1, 10)))
			<-sink.entered // the first (small) round is in the sink
			require.NoError(t, b.Enqueue(payload(2, 10)))
			close(sink.gate) // its write returns, having taken tc.took
			// The second record is collected right after: gathered, or not.
			waitFor(t, "the second record written", func() bool { return len(sink.records()) == 2 })
			closeBus(t, b)
			// The second record's round was the last to consider a wait
			// (the first one's may have come after an idle sleep).
			require.Equal(t, tc.want, b.d.lastGather)
			requireAccounting(t, b.Stats())
		})
	}
}

// TestSleepLooksForWaitersAfterMarkingItself: a Flush, Sync or Close that
// kicked while the drainer was still marked running sent no wake-up token,
// so sleepFor looks at their flags after marking itself sleeping and does
// not sleep when one is set. Called directly on a closed
// bus (its drainer gone) with the flags set by hand.
func TestSleepLooksForWaitersAfterMarkingItself(t *testing.T) {
	b := newTestBus(t, &batchSink{}, Config{Capacity: 4096}, nil)
	closeBus(t, b)
	d := &b.d
	b.tail.Store(b.tail.Load() &^ closedBit)
	for _, tc := range []struct {
		name string
		set  func()
	}{
		{"flush pending", func() { b.flushPending.Store(true) }},
		{"closed", func() { b.tail.Store(b.tail.Load() | closedBit) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.flushPending.Store(false)
			b.tail.Store(b.tail.Load() &^ closedBit)
			b.waiters.Store(0)
			b.state.Store(stRunning)
			tc.set()
			done := make(chan bool, 1)
			go func() { done <- d.sleepFor(time.Hour, true) }()
			select {
			case ok := <-done:
				require.True(t, ok)
			case <-time.After(30 * time.Second): // a deadlock guard, not a timing assertion
				t.Fatal("sleepFor slept although a caller wanted the drainer")
			}
			require.Equal(t, uint32(stRunning), b.state.Load())
		})
	}
	// With nothing set it sleeps until the timer, as before; a Block caller
	// waiting for space does not count (see drainer.wanted).
	b.flushPending.Store(false)
	b.tail.Store(b.tail.Load() &^ closedBit)
	b.waiters.Store(1)
	start := time.Now()
	require.True(t, d.sleepFor(time.Millisecond, true))
	require.GreaterOrEqual(t, time.Since(start), time.Millisecond)
	b.waiters.Store(0)
}
