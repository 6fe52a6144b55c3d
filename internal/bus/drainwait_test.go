package bus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParkAndWake(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096, MaxLatency: time.Millisecond}, nil)
	waitFor(t, "drainer parked", func() bool { return b.state.Load() == stParked })
	require.NoError(t, b.Enqueue(payload(1, 10)))
	waitFor(t, "record written without Flush", func() bool { return len(sink.records()) == 1 })
	st := b.Stats()
	require.NotZero(t, st.Parks)
	require.NotZero(t, st.Wakeups)
	closeBus(t, b)
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
