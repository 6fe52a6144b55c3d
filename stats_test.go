package asyncbus

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrainerStatsCountTheDrainer: DrainerStats counts the drainer's rounds
// and every call into the output, reports a batch target, and is the same
// snapshot from every handler derived from one NewHandler.
func TestDrainerStatsCountTheDrainer(t *testing.T) {
	var w countingWriter
	h := NewHandler(&w, &Options{Ring: RingOptions{BlockTimeout: time.Hour}})
	assert.Zero(t, h.DrainerStats().WriteCalls, "nothing written yet")

	l := slog.New(h)
	const n = 5000
	for i := range n {
		l.Info("request handled", "seq", i)
	}
	require.NoError(t, h.Close())

	d := h.DrainerStats()
	assert.EqualValues(t, w.calls.Load(), d.WriteCalls, "every call into the output")
	assert.Positive(t, d.Batches)
	assert.LessOrEqual(t, d.Batches, d.WriteCalls, "a round that wrote made at least one call")
	assert.Positive(t, d.BatchTarget)

	tests := []struct {
		name string
		h    *Handler
	}{
		{"WithAttrs", h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).(*Handler)},
		{"WithGroup", h.WithGroup("g").(*Handler)},
		{"Named", h.Named("db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, d, tt.h.DrainerStats(), "shared with the root")
		})
	}
}

// gatedOutput holds its first Write until open is closed, and says when
// that Write began.
type gatedOutput struct {
	entered, open chan struct{}
	once          sync.Once
	mu            sync.Mutex
	buf           bytes.Buffer
}

func (w *gatedOutput) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.entered)
		<-w.open
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestQueueDelayWithASlowOutput(t *testing.T) {
	w := &gatedOutput{entered: make(chan struct{}), open: make(chan struct{})}
	h := NewHandler(w, nil)
	l := slog.New(h)
	start := time.Now()
	l.Info("first") // the drainer takes it and is held in the output
	<-w.entered
	for i := range 10 {
		l.Info("queued behind it", "i", i)
	}
	const hold = 100 * time.Millisecond
	time.Sleep(hold) // the output is slow: the queued records wait at least this long
	close(w.open)
	require.NoError(t, h.Flush())
	elapsed := time.Since(start)
	st := h.Stats()
	require.NoError(t, h.Close())

	// The queued records' batch waited the hold at least, and no batch
	// can have waited longer than the whole test.
	assert.GreaterOrEqual(t, st.QueueDelayMax, hold, "%+v", st)
	assert.LessOrEqual(t, st.QueueDelayMax, elapsed)
	assert.GreaterOrEqual(t, st.QueueDelayP99, hold, "two batches: the 99th percentile is the slower")
	assert.LessOrEqual(t, st.QueueDelayP99, st.QueueDelayMax)
	assert.LessOrEqual(t, st.QueueDelayP50, st.QueueDelayP99)
}

func TestQueueDelayZeroBeforeAnyBatch(t *testing.T) {
	h := NewHandler(io.Discard, nil)
	st := h.Stats()
	require.NoError(t, h.Close())
	assert.Zero(t, st.QueueDelayP50)
	assert.Zero(t, st.QueueDelayP99)
	assert.Zero(t, st.QueueDelayMax)
}
