package bus

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDropMarkerAtGap fills the ring behind a blocked sink, drops, then
// checks the marker sits exactly between the records before and after.
func TestDropMarkerAtGap(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"Drop", Config{Overflow: Drop}},
		{"BlockTimeout", Config{Overflow: Block, BlockTimeout: time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
			cfg := tc.cfg
			cfg.Capacity = 1024
			cfg.DropMarker = func(dst []byte, n uint64) []byte {
				return append(dst, "MARK "+strconv.FormatUint(n, 10)+"\n"...)
			}
			b := newTestBus(t, sink, cfg, nil)
			var want [][]byte
			require.NoError(t, b.Enqueue(payload(0, 40)))
			want = append(want, payload(0, 40))
			<-sink.entered
			i := 1
			for ; ; i++ {
				p := payload(i, 40)
				err := b.Enqueue(p)
				if err != nil {
					require.ErrorIs(t, err, ErrDropped)
					break
				}
				want = append(want, p)
			}
			for j := range 4 {
				require.ErrorIs(t, b.Enqueue(payload(1000+j, 40)), ErrDropped)
			}
			want = append(want, []byte("MARK 5\n"))
			close(sink.gate)
			require.NoError(t, b.Flush(context.Background()))
			for j := range 10 {
				p := payload(2000+j, 40)
				require.NoError(t, b.Enqueue(p))
				want = append(want, p)
			}
			closeBus(t, b)
			require.Equal(t, want, sink.records())
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, 5, st.Dropped)
			require.EqualValues(t, 1, st.DropMarkers)
		})
	}
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
