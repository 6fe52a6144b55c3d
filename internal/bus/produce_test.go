package bus

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrapAroundEveryOffset(t *testing.T) {
	const capacity = 256
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, read := sc.make(t)
			b := newTestBus(t, w, Config{Capacity: capacity}, nil)
			maxRec := b.maxRecord
			sizes := []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 24, maxRec - 1, maxRec, maxRec + 1, capacity, 3 * capacity}
			var want [][]byte
			seen := map[[2]uint64]bool{}
			for off := uint64(0); off < capacity; off += 8 {
				for _, size := range sizes {
					for b.tail.Load()&b.mask != off { // move the tail with empty records
						require.NoError(t, b.Enqueue(nil))
					}
					seen[[2]uint64{off, uint64(size)}] = true
					p := payload(len(want), size)
					require.NoError(t, b.Enqueue(p))
					want = append(want, p)
				}
			}
			closeBus(t, b)
			require.Len(t, seen, capacity/8*len(sizes))
			require.Equal(t, want, read())
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, 3*capacity/8, st.Oversize)
		})
	}
}

func TestOversizeKeepsOrder(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 1024, maxRecord: 64}, nil)
	var want [][]byte
	for i := range 200 {
		size := 10 + i%50
		if i%7 == 0 {
			size = 65 + i*13 // oversize, some larger than the ring
		}
		p := payload(i, size)
		require.NoError(t, b.Enqueue(p))
		want = append(want, p)
	}
	closeBus(t, b)
	require.Equal(t, want, sink.records())
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 29, st.Oversize)
	require.Zero(t, b.oversizeBytes.Load())
}

func TestBlockWaitsForSpace(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 512}, nil)
	var want [][]byte
	for i := range 100 {
		want = append(want, payload(i, 30))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range want {
			assert.NoError(t, b.Enqueue(p))
		}
	}()
	<-sink.entered
	waitFor(t, "producer parked", func() bool { return b.waiters.Load() > 0 })
	close(sink.gate)
	<-done
	closeBus(t, b)
	require.Equal(t, want, sink.records())
	st := b.Stats()
	requireAccounting(t, st)
	require.Zero(t, st.Dropped)
}

// gateWriter is a plain io.Writer whose writes wait until gate is closed: an
// output that hangs.
type gateWriter struct {
	gate chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestHungOutputBlocks: a Write that does not return is
// not a failure: Block callers wait for space (back-pressure), and once the
// output moves on, every record arrives exactly once, in per-caller order.
func TestHungOutputBlocks(t *testing.T) {
	const callers, perCaller, size = 4, 200, 50
	w := &gateWriter{gate: make(chan struct{})}
	b := newTestBus(t, w, Config{Capacity: 4096, Overflow: Block}, nil)
	var wg sync.WaitGroup
	var done atomic.Int64
	for p := range callers {
		wg.Go(func() {
			var buf []byte
			for s := range perCaller {
				buf = rec(buf, p, s, size)
				require.NoError(t, b.Enqueue(buf))
			}
			done.Add(1)
		})
	}
	waitFor(t, "callers blocked on the full ring", func() bool { return b.waiters.Load() > 0 })
	require.Less(t, done.Load(), int64(callers), "not every caller got through")
	require.Zero(t, b.Stats().Failed)
	close(w.gate)
	wg.Wait()
	closeBus(t, b)
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, callers*perCaller, st.Written)
	next := make([]int, callers)
	for _, l := range splitLines(w.buf.Bytes()) {
		p, s, err := parseRec(l)
		require.NoError(t, err)
		require.Equal(t, next[p], s)
		next[p]++
	}
	for p := range callers {
		require.Equal(t, perCaller, next[p])
	}
}

// TestDropModeNeverDropsWithRoom: producers paused between reading the
// cursors must not see a ring with room as full. 16 producers enqueue
// 512 KiB in total into a 1 MiB ring, so any drop is spurious.
func TestDropModeNeverDropsWithRoom(t *testing.T) {
	iterations := 60
	if testing.Short() {
		iterations = 10
	}
	for iter := range iterations {
		b, err := testNew(io.Discard, Config{Capacity: 1 << 20, Overflow: Drop, MaxLatency: 1})
		require.NoError(t, err)
		var wg sync.WaitGroup
		var drops atomic.Int64
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := make([]byte, 24)
				for i := range 1000 { // 16 × 1000 × 32 ring bytes = 512 KiB
					if b.Enqueue(p) != nil {
						drops.Add(1)
					}
					if i%64 == 0 {
						runtime.Gosched()
					}
				}
			}()
		}
		wg.Wait()
		require.NoError(t, b.Close(context.Background()))
		require.Zero(t, drops.Load(), "iteration %d: stats %+v", iter, b.Stats())
	}
}

// EnqueueUntil's wait for room ends when its ctx ends: the record is
// dropped and counted (and marked in the output), and once ctx has ended
// a record that finds room is still taken, without waiting.
func TestEnqueueUntilDropsWhenCtxEnds(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{Capacity: 4096}, patient)
	first := make(chan error, 1)
	go func() { first <- b.Enqueue(payload(0, 200)) }()
	<-s.entered // the drainer is stuck in the sink with the first record
	ctx, cancel := context.WithCancel(context.Background())
	// Fill the ring while the sink is stuck.
	n := 1
	for ; b.Stats().QueueDepth+uint64(align8(hdrSize+200)) <= b.capacity; n++ {
		require.NoError(t, b.EnqueueUntil(ctx, payload(n, 200)))
	}
	errc := make(chan error, 1)
	go func() { errc <- b.EnqueueUntil(ctx, payload(n, 200)) }()
	select {
	case err := <-errc:
		t.Fatalf("EnqueueUntil returned (%v) with the ring full and ctx live", err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, ErrDropped)
	close(s.gate)
	require.NoError(t, <-first)
	require.NoError(t, b.Flush(context.Background()))
	require.NoError(t, b.EnqueueUntil(ctx, payload(n+1, 200)), "room again: taken although ctx has ended")
	closeBus(t, b)
	st := b.Stats()
	assert.EqualValues(t, 1, st.Dropped)
	assert.EqualValues(t, n+1, st.Written)
	requireAccounting(t, st)
}

// EnqueueWrittenCtx waits for the drainer's write of its record and
// returns ctx's error when ctx ends first; the record stays queued and is
// written later.
func TestEnqueueWrittenCtxEndsWithCtx(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{}, patient)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.EnqueueWrittenCtx(ctx, payload(0, 30)) }()
	<-s.entered // the drainer (not this caller) is writing it, stuck
	select {
	case err := <-errc:
		t.Fatalf("EnqueueWrittenCtx returned (%v) before its write", err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	close(s.gate)
	closeBus(t, b)
	assert.Equal(t, [][]byte{payload(0, 30)}, s.records())
	requireAccounting(t, b.Stats())
}

func TestEnqueueZeroAllocs(t *testing.T) {
	b := newTestBus(t, io.Discard, Config{Capacity: 1 << 20}, nil)
	p := payload(0, 200)
	allocs := testing.AllocsPerRun(1000, func() { _ = b.Enqueue(p) })
	require.Zero(t, allocs)
	closeBus(t, b)
}

// An Error record's wait is made only when it can succeed: behind a
// backlog that the output, at its measured rate, cannot write within
// ErrorWaitMax, EnqueueWritten returns at once with the record queued;
// behind a short queue it waits, and the record is written on return.
func TestErrorWaitOnlyWhenWritable(t *testing.T) {
	w := newPacedWriter(1024, time.Millisecond) // at most 1 MB/s
	b := newTestBus(t, w, Config{Capacity: 2 << 20}, nil)
	for i := 0; b.Stats().OutputRate == 0; i++ { // rateWindow of writing measures the output
		require.NoError(t, b.Enqueue(payload(1000+i, 1000)))
		require.NoError(t, b.Flush(context.Background()))
	}

	short := []byte("an error behind a short queue\n")
	require.NoError(t, b.EnqueueWritten(short))
	assert.True(t, bytes.Contains(w.bytes(), short), "behind a short queue the record is written on return")

	var buf []byte
	for i := 0; b.Stats().QueueDepth < 3<<19; i++ { // over 1.5 s of output ahead
		buf = rec(buf, 0, i, 200)
		require.NoError(t, b.Enqueue(buf))
	}
	start := time.Now()
	last := []byte("an error behind a backlog\n")
	require.NoError(t, b.EnqueueWritten(last))
	assert.Less(t, time.Since(start), ErrorWaitMax/2, "no wait that cannot succeed")
	assert.False(t, bytes.Contains(w.bytes(), last), "the record is still queued")
	closeBus(t, b)
	assert.True(t, bytes.Contains(w.bytes(), last), "and written by Close")
	requireAccounting(t, b.Stats())
}
