package bus

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchTakesUpToMaxBatch: a batch takes every committed record up to
// maxBatch, and Stats reports the records of the last batch written.
func TestBatchTakesUpToMaxBatch(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 1 << 16, minBatch: 4, maxBatch: 256}, nil)
	require.Zero(t, b.Stats().BatchTarget, "no batch written yet")
	require.NoError(t, b.Enqueue(payload(0, 30)))
	<-sink.entered
	for i := range 1500 { // queued behind the blocked sink
		require.NoError(t, b.Enqueue(payload(i, 30)))
	}
	close(sink.gate)
	require.NoError(t, b.Flush(context.Background()))
	require.Equal(t, 256, sink.maxBatch, "a backlog is written maxBatch records at a time")
	last := b.Stats().BatchTarget
	require.Positive(t, last)
	require.LessOrEqual(t, last, uint64(256))
	closeBus(t, b)
	st := b.Stats()
	requireAccounting(t, st)
	require.GreaterOrEqual(t, st.QueueHighWater, uint64(1500*40))
}

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

// After its work the drainer of a quiet program (with quiet waits on)
// parks at once, since the program's next record wakes a parked drainer;
// a busy program's drainer first sleeps MaxLatency/2, gathering the next
// batch, and so does one without quiet waits.
func TestIdleParksAtOnceWhileQuiet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
		waits   bool
		want    uint32
	}{
		{"quiet: one record", 1, true, stParked},
		{"busy: a burst of four seconds' quiet rate", 4 * QuietWaitRate, true, stSleeping},
		{"without quiet waits", 1, false, stSleeping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The output holds its first call until every record is
			// queued, so that they are written at once; a sleep of a
			// second, long enough to be seen. An ended ctx: no quiet wait.
			w := newHungWriter()
			b := newTestBus(t, w, Config{Capacity: 1 << 20, MaxLatency: 2 * time.Second, QuietWait: tc.waits}, patient)
			defer closeBus(t, b)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			require.NoError(t, b.EnqueueUntil(ctx, payload(0, 10)))
			<-w.entered
			for i := 1; i < tc.records; i++ {
				require.NoError(t, b.EnqueueUntil(ctx, payload(i, 10)))
			}
			close(w.gate)
			waitFor(t, "records written", func() bool { return b.Stats().Written == uint64(tc.records) })
			waitFor(t, "drainer idle", func() bool { return b.state.Load() != stRunning })
			require.Equal(t, tc.records == 1, b.quiet()) // the drainer counts records only with quiet waits on
			assert.Equal(t, tc.want, b.state.Load())
		})
	}
}
