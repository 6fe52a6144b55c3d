package asyncbus

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyOther is a Sampler (no markers) that keeps every other call and
// records what it was asked.
type everyOther struct {
	calls  atomic.Uint64
	logger atomic.Value
}

func (s *everyOther) Sample(_ time.Time, _ slog.Level, _ string, logger string) bool {
	s.logger.Store(logger)
	return s.calls.Add(1)%2 == 1
}

// TestSamplerDecidesOncePerRecord: Handle, HandleAttrs and their derived
// (stateful) forms each consult the Sampler exactly once per record, with
// the handler's logger name; refusals are counted in Stats.Sampled.
func TestSamplerDecidesOncePerRecord(t *testing.T) {
	var sink memSink
	s := &everyOther{}
	h := NewHandler(&sink, &Options{Sampler: s, StackTraceLevel: slog.LevelError})
	ctx := context.Background()
	n := h.Named("n")
	w := n.WithAttrs([]slog.Attr{slog.Int("w", 1)}).(*Handler)
	calls := []func(){
		func() { _ = h.Handle(ctx, recordAt(1)) },
		func() { _ = h.HandleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) },
		func() { _ = w.Handle(ctx, recordAt(2)) },
		func() { _ = w.HandleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) },
		func() { _ = n.HandleAttrs(ctx, fixedTime, slog.LevelError, "with stack", nil) },
	}
	for i, call := range calls {
		before := s.calls.Load()
		call()
		call()
		assert.Equal(t, before+2, s.calls.Load(), "call %d", i)
	}
	assert.Equal(t, "n", s.logger.Load())
	require.NoError(t, h.Close())
	st := h.Stats()
	assert.Equal(t, uint64(len(calls)), st.Sampled)
	assert.Zero(t, st.SampleMarkers, "a Sampler without markers")
	assert.Equal(t, uint64(len(calls)), st.Written)
	assert.Len(t, sink.Lines(), len(calls))
}

func TestSamplerNilAllocatesNothing(t *testing.T) {
	h := NewHandler(io.Discard, &Options{})
	defer h.Close()
	r := recordAt(1)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.Handle(ctx, r) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.HandleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) }))
	assert.Zero(t, h.Stats().Sampled)
}
