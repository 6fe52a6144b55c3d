package bus

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record behind a short queue waits until the drainer has written it
// (the quiet wait), in Block and Drop mode alike: it is in the output when
// Enqueue returns.
func TestQuietWaitInEveryMode(t *testing.T) {
	for _, mode := range []Overflow{Block, Drop} {
		t.Run(mode.String(), func(t *testing.T) {
			s := &streamSink{}
			b := newTestBus(t, s, Config{Overflow: mode, QuietWait: true}, patient)
			for i := range 5 {
				rec := payload(i, 40)
				require.NoError(t, b.Enqueue(rec))
				assert.True(t, bytes.Contains(s.bytes(), rec), "record %d written when Enqueue returned", i)
			}
			closeBus(t, b)
			requireAccounting(t, b.Stats())
		})
	}
}

// Each wait's bound: an Error record's wait ends at ErrorWaitMax, a
// SyncLevel wait at SyncWaitMax's stand-in, the record queued, behind an
// output that is slow but not stuck.
func TestWaitBounds(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{}, patient)
	require.NoError(t, b.Enqueue(payload(0, 40)))
	<-w.entered // the drainer is in the output; patient: never stuck
	start := time.Now()
	require.NoError(t, b.EnqueueWritten(payload(1, 40)), "the bound ends the wait; the record stays queued")
	assert.GreaterOrEqual(t, time.Since(start), ErrorWaitMax, "it waited its bound")
	start = time.Now()
	err := b.waitWritten(context.Background(), b.tail.Load(), waitSpec{bound: 30 * time.Millisecond, sync: true, skip: true})
	require.ErrorIs(t, err, ErrWaitBound)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	close(w.gate)
	closeBus(t, b)
	st := b.Stats()
	assert.EqualValues(t, 2, st.Written, "both records written after the waits")
	requireAccounting(t, st)
}

// Against a stuck output (a call in flight past the stuck bound), every
// log call's wait is skipped: the Error wait at once and the SyncLevel
// wait once the call has been in flight for its own bound, both with the
// record queued, and a Block producer that finds the ring full
// drops its record (counted, marked) instead of waiting for ever. Flush
// waits its own context.
func TestWaitsSkippedWhenStuck(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{Capacity: 4096, Overflow: Block, QuietWait: true}, func(b *Bus) {
		b.stuckAfter = int64(time.Millisecond) // and 20 ms while goroutines wait for a processor
	})
	require.NoError(t, b.Enqueue(payload(0, 40)))
	<-w.entered
	waitFor(t, "the output is stuck", func() bool { return b.stuckCall(0) != 0 })

	require.NoError(t, b.EnqueueWritten(payload(1, 40)), "skipped: the record stays queued")
	require.ErrorIs(t, b.SyncBounded(context.Background()), ErrWaitBound)
	var dropped int
	for i := 2; dropped == 0; i++ {
		switch err := b.Enqueue(payload(i, 200)); err {
		case nil:
		case ErrDropped:
			dropped++
		default:
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Flush(ctx), context.DeadlineExceeded, "Flush waits its own bound")

	close(w.gate)
	closeBus(t, b)
	st := b.Stats()
	assert.EqualValues(t, dropped, st.Dropped)
	assert.EqualValues(t, 1, st.DropMarkers, "the drop is marked in the output")
	requireAccounting(t, st)
}

// A wait is skipped when the output, at its measured pace, cannot write
// the bytes ahead of the record within the wait's bound.
func TestWaitSkippedBeyondThePace(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{}, patient)
	require.NoError(t, b.Enqueue(payload(0, 40)))
	<-w.entered
	b.outRate.Store(1000) // 1 kB/s: the bytes queued take longer than 50 ms
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i+1, 100)))
	}
	assert.True(t, b.hopeless(b.tail.Load(), ErrorWaitMax, ErrorWaitMax))
	assert.False(t, b.hopeless(b.tail.Load(), time.Hour, time.Hour), "within a longer bound it can succeed")
	assert.False(t, b.hopeless(b.tail.Load(), 0, 0), "no bound: no pace test")
	err := b.waitWritten(context.Background(), b.tail.Load(), errorWait)
	assert.ErrorIs(t, err, ErrWaitBound, "an Error wait is skipped at once")
	close(w.gate)
	closeBus(t, b)
}

// Inside a call into the output (an output logging through its own
// handler) a wait would wait for itself: inOutputCall finds the call on
// the drainer's stack, and nowhere else, without allocating.
func TestInOutputCall(t *testing.T) {
	var inside, insideBatch atomic.Int32
	var b *Bus
	s := &callbackSink{onWrite: func() {
		if b.inOutputCall() {
			inside.Add(1)
		}
	}}
	b = newTestBus(t, s, Config{}, nil)
	require.NoError(t, b.Flush(context.Background()))
	require.NoError(t, b.Enqueue(payload(0, 40)))
	require.NoError(t, b.Flush(context.Background()))
	closeBus(t, b)
	assert.EqualValues(t, 1, inside.Load(), "found inside Write")

	bs := &callbackBatchSink{callbackSink{onWrite: func() {
		if b.inOutputCall() {
			insideBatch.Add(1)
		}
	}}}
	b = newTestBus(t, bs, Config{}, nil)
	require.NoError(t, b.Enqueue(payload(0, 40)))
	require.NoError(t, b.Flush(context.Background()))
	closeBus(t, b)
	assert.EqualValues(t, 1, insideBatch.Load(), "found inside WriteBatch")

	b.callSince.Store(1) // as if a call were in flight
	assert.False(t, b.inOutputCall(), "not inside one")
	assert.Zero(t, testing.AllocsPerRun(100, func() { b.inOutputCall() }))
}

// callbackSink runs onWrite in every Write.
type callbackSink struct{ onWrite func() }

func (s *callbackSink) Write(p []byte) (int, error) {
	s.onWrite()
	return len(p), nil
}

type callbackBatchSink struct{ callbackSink }

func (s *callbackBatchSink) WriteBatch(recs [][]byte) (int, error) {
	s.onWrite()
	return len(recs), nil
}

// A wait is not skipped for its pace while the entry at head is not
// committed: the bytes from head may then be a rewind's skipped space,
// not a backlog (the same view as a reservation still being copied).
func TestWaitNotSkippedBeforeAnUncommittedHead(t *testing.T) {
	b := newTestBus(t, &streamSink{}, Config{}, patient)
	first := payload(0, 40)
	need := align8(hdrSize + uint64(len(first)))
	t0 := b.tail.Load()
	require.True(t, b.tail.CompareAndSwap(t0, t0+need), "a reservation, as a producer makes it, not committed yet")
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i+1, 100)))
	}
	b.outRate.Store(1000) // 1 kB/s: at this pace the bytes from head take longer than the bound
	require.Equal(t, t0, b.head.Load(), "the drainer waits at the uncommitted entry")
	assert.False(t, b.hopeless(b.tail.Load(), ErrorWaitMax, ErrorWaitMax))
	b.commit(b.offsetOf(t0), first)
	require.NoError(t, b.Flush(context.Background()))
	assert.True(t, b.head.Load() > t0)
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}

// heldBacklog makes a bus whose output holds its first call, with ten
// records queued behind it, and returns the bytes queued.
func heldBacklog(t *testing.T) (*Bus, *hungWriter, uint64) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{}, patient)
	require.NoError(t, b.Enqueue(payload(0, 40)))
	<-w.entered
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i+1, 100)))
	}
	return b, w, b.tail.Load() - b.head.Load()
}

// An Error wait is made only when the output's pace writes the bytes
// ahead within StuckAfter, though its bound is longer: behind an output
// slower than the log rate a request does not wait for long.
func TestErrorWaitReach(t *testing.T) {
	b, w, ahead := heldBacklog(t)
	// A pace at which the bytes ahead take 100 ms: within ErrorWaitMax,
	// beyond StuckAfter.
	b.outRate.Store(ahead * uint64(time.Second/(2*StuckAfter)))
	require.Less(t, 2*StuckAfter, ErrorWaitMax)
	assert.False(t, b.hopeless(b.tail.Load(), ErrorWaitMax, ErrorWaitMax), "within the bound")
	assert.True(t, b.hopeless(b.tail.Load(), ErrorWaitMax, errorWait.reach), "beyond the reach")
	assert.ErrorIs(t, b.waitWritten(context.Background(), b.tail.Load(), errorWait), ErrWaitBound)
	close(w.gate)
	closeBus(t, b)
}

// A log call's wait looks at the pace again while it waits: one made on a
// fast sample (a pipe's empty buffer) ends once a slower sample says the
// bytes still ahead take longer than its reach. The wait here has no
// bound, so only that look can end it.
func TestWaitEndsWhenThePaceSlows(t *testing.T) {
	b, w, ahead := heldBacklog(t)
	b.outRate.Store(ahead * uint64(time.Second/time.Millisecond)) // the bytes ahead take 1 ms
	spec := waitSpec{skip: true, reach: StuckAfter}
	done := make(chan error, 1)
	go func() { done <- b.waitWritten(context.Background(), b.tail.Load(), spec) }()
	waitFor(t, "the wait made", b.flushPending.Load)
	b.outRate.Store(ahead * uint64(time.Second/(2*StuckAfter))) // a new sample: they take 100 ms
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrWaitBound)
	case <-time.After(time.Minute):
		t.Fatal("the wait did not end on the slower pace")
	}
	close(w.gate)
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}

// A quiet wait is made only when the output writes the record within
// batchSpan, one call of its measured mean time included: a caller never
// waits for a slow output's call (5 ms), only for a cheap one (1 ms).
func TestQuietWaitReach(t *testing.T) {
	for _, tc := range []struct {
		name string
		call time.Duration
		skip bool
	}{
		{"unmeasured", 0, false},
		{"1 ms a call", time.Millisecond, false},
		{"5 ms a call", 5 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHungWriter()
			b := newTestBus(t, w, Config{}, patient)
			require.NoError(t, b.Enqueue(payload(0, 40)))
			<-w.entered // the call in flight holds head: the record below is ahead of nothing else
			require.NoError(t, b.Enqueue(payload(1, 100)))
			if tc.call > 0 {
				b.outRate.Store(1 << 30) // the bytes take nothing: the call's time decides
				b.callNs.Store(int64(tc.call))
			}
			assert.Equal(t, tc.skip, b.hopeless(b.tail.Load(), b.quietWait.bound, quietWait.reach))
			close(w.gate)
			closeBus(t, b)
		})
	}
}

// The program is quiet while it logs at most QuietWaitRate records a
// second after a burst of as many (the drainer's count); once busy, it is
// quiet again a second after it slows down, however long it was busy.
func TestQuietCountsTheProgramsRecords(t *testing.T) {
	const interval = int64(time.Second / QuietWaitRate)
	b := &Bus{}
	b.d.b = b
	now := int64(time.Hour) // any moment on the bus's clock
	b.d.countRecords(QuietWaitRate, now)
	assert.Equal(t, now, b.quietFrom.Load(), "a burst of QuietWaitRate: still quiet")
	b.d.countRecords(1, now)
	assert.Equal(t, now+interval, b.quietFrom.Load(), "one more: busy for one record's share of a second")
	for i := range 10_000 { // 1,000 records a second for 10 s
		b.d.countRecords(1, now+int64(i)*int64(time.Millisecond))
	}
	end := now + 10_000*int64(time.Millisecond)
	assert.Greater(t, b.quietFrom.Load(), end, "busy")
	assert.LessOrEqual(t, b.quietFrom.Load(), end+int64(time.Second), "quiet within a second of slowing down")
	b.d.countRecords(QuietWaitRate/2, end+int64(time.Second)) // half a burst a second after
	assert.LessOrEqual(t, b.quietFrom.Load(), end+2*int64(time.Second), "quiet again a second later")
}
