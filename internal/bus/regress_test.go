package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression tests for bugs found in review.

// TestHugeMaxBatchIsClamped: an absurd MaxBatch is clamped to the number of
// entries the ring can hold instead of making New allocate for it (or panic).
func TestHugeMaxBatchIsClamped(t *testing.T) {
	for _, mb := range []int{math.MaxInt, 1 << 34} {
		b, err := testNew(io.Discard, Config{Capacity: 4096, maxBatch: mb, minBatch: mb})
		require.NoError(t, err)
		assert.LessOrEqual(t, b.maxBatch, 4096/hdrSize)
		assert.LessOrEqual(t, b.minBatch, b.maxBatch)
		require.NoError(t, b.Enqueue([]byte("x\n")))
		require.NoError(t, b.Close(context.Background()))
		assert.EqualValues(t, 1, b.Stats().Written)
	}
}

// TestWritevFailureOnClosedFileCountsFailed: when the file is closed under
// the bus, rc.Write fails without running the syscall; the bytes of the
// previous writev must not be counted again as written.
func TestWritevFailureOnClosedFileCountsFailed(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	b, err := newBus(w, withMarker(Config{Capacity: 4096}), fastRetry)
	require.NoError(t, err)
	require.Equal(t, sinkWritev, b.sink, "an *os.File pipe is written with writev")
	require.NoError(t, b.Enqueue([]byte("first-record\n")))
	require.NoError(t, b.Flush(context.Background()))
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "first-record\n", string(buf[:n]))

	require.NoError(t, w.Close()) // nothing more can be written
	require.NoError(t, b.Enqueue([]byte("x\n")))
	ferr := b.Flush(context.Background())
	_ = b.Close(context.Background())
	st := b.Stats()
	assert.EqualValues(t, 1, st.Written)
	assert.EqualValues(t, 1, st.Failed)
	var se *SinkError
	require.True(t, errors.As(ferr, &se), "Flush reports the failure: %v", ferr)
	assert.Equal(t, "write", se.Op)
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

// TestPanickingDropMarkerIsReported: a DropMarker hook that panics neither
// kills the drainer nor hides the gap: OnError is told how many records
// were lost there.
func TestPanickingDropMarkerIsReported(t *testing.T) {
	gate := make(chan struct{})
	sink := &gatedSink{gate: gate}
	var mu sync.Mutex
	var reports []string
	b, err := testNew(sink, Config{Capacity: 256, Overflow: Drop,
		OnError: func(err error) {
			mu.Lock()
			reports = append(reports, err.Error())
			mu.Unlock()
		},
		DropMarker: func([]byte, uint64) []byte { panic("boom") }})
	require.NoError(t, err)
	dropped := 0
	for range 64 {
		if b.Enqueue([]byte("0123456789012345678901234567890\n")) != nil {
			dropped++
		}
	}
	require.Positive(t, dropped)
	close(gate)
	require.NoError(t, b.Close(context.Background()))
	st := b.Stats()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1)
	assert.Contains(t, reports[0], fmt.Sprintf("asyncbus: mark %T: %d records dropped here; the drop marker panicked: boom", sink, st.Dropped))
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
}

// gatedSink holds every write until gate is closed.
type gatedSink struct {
	gate chan struct{}
	mu   sync.Mutex
	buf  []byte
}

func (g *gatedSink) Write(p []byte) (int, error) {
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.buf = append(g.buf, p...)
	return len(p), nil
}

func (g *gatedSink) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return string(g.buf)
}

// TestDropAfterFinalGapsCountsAsClosed: a Drop-mode producer that found
// the ring full before Close, and registers its drop only after the
// drainer has written its last marker, is counted as refused after Close
// (ErrClosed) instead of leaving a gap that no marker will ever report.
func TestDropAfterFinalGapsCountsAsClosed(t *testing.T) {
	b, err := testNew(io.Discard, Config{Capacity: 4096, Overflow: Drop})
	require.NoError(t, err)
	require.NoError(t, b.Close(context.Background()))
	require.ErrorIs(t, b.drop(0), ErrClosed)
	st := b.Stats()
	assert.EqualValues(t, 1, st.Dropped)
	assert.EqualValues(t, 1, st.DroppedClosed)
	b.dropMu.Lock()
	assert.Empty(t, b.gaps)
	b.dropMu.Unlock()
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
}

// TestRegularFileStagingNotKept: a regular file is written from a staged
// copy of the batch (sinkCopy); a batch holding a large oversize record must
// not leave a staging buffer of its size behind.
func TestRegularFileStagingNotKept(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	defer f.Close()
	b := newTestBus(t, f, Config{Capacity: 64 << 10}, nil)
	require.Equal(t, sinkCopy, b.sink, "a regular file is written with one write of a staged copy")
	big := payload(1, 2*maxStagingKeep)
	small := payload(2, 100)
	require.NoError(t, b.Enqueue(small))
	require.NoError(t, b.Enqueue(big))
	require.NoError(t, b.Enqueue(small))
	closeBus(t, b) // the drainer has exited: its state may be read
	assert.LessOrEqual(t, cap(b.d.staging), maxStagingKeep)
	st := b.Stats()
	assert.EqualValues(t, 3, st.Written)
	assert.EqualValues(t, 1, st.Oversize)
	data, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.Equal(t, string(small)+string(big)+string(small), string(data))
}
