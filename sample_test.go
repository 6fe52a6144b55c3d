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
	h := NewHandler(&sink, &Options{Features: FeatureOptions{Sampler: s, StackTraceLevel: slog.LevelError}})
	ctx := context.Background()
	n := h.Named("n")
	w := n.WithAttrs([]slog.Attr{slog.Int("w", 1)}).(*Handler)
	calls := []func(){
		func() { _ = h.Handle(ctx, recordAt(1)) },
		func() { _ = h.handleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) },
		func() { _ = w.Handle(ctx, recordAt(2)) },
		func() { _ = w.handleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) },
		func() { _ = n.handleAttrs(ctx, fixedTime, slog.LevelError, "with stack", nil) },
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

// refuseAll is a Sampler that refuses every record and counts its calls.
type refuseAll struct{ calls atomic.Uint64 }

func (s *refuseAll) Sample(time.Time, slog.Level, string, string) bool {
	s.calls.Add(1)
	return false
}

// TestSamplerHandleAfterCloseReturnsErrClosed: with a Sampler, Handle and
// HandleAttrs after Close return ErrClosed and count the record in Dropped
// and DroppedClosed, as without one; the Sampler is not consulted and
// Stats.Sampled does not move.
func TestSamplerHandleAfterCloseReturnsErrClosed(t *testing.T) {
	var sink memSink
	s := &refuseAll{}
	var reports reportLog
	h := NewHandler(&sink, &Options{Features: FeatureOptions{Sampler: s}, OnError: reports.onError})
	ctx := context.Background()
	require.NoError(t, h.Handle(ctx, recordAt(1)), "refused by the Sampler: nil")
	require.NoError(t, h.Close())
	before := h.Stats()
	require.EqualValues(t, 1, before.Sampled)

	calls := map[string]func() error{
		"Handle":              func() error { return h.Handle(ctx, recordAt(2)) },
		"HandleAttrs":         func() error { return h.handleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) },
		"derived Handle":      func() error { return h.WithGroup("g").Handle(ctx, recordAt(3)) },
		"derived HandleAttrs": func() error { return h.Named("n").handleAttrs(ctx, fixedTime, slog.LevelError, "m", nil) },
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(), ErrClosed, name)
	}
	st := h.Stats()
	n := uint64(len(calls))
	assert.Equal(t, before.DroppedClosed+n, st.DroppedClosed)
	assert.Equal(t, before.Dropped+n, st.Dropped)
	assert.Equal(t, before.Sampled, st.Sampled)
	assert.EqualValues(t, 1, s.calls.Load(), "the Sampler is not consulted after Close")
	assert.Empty(t, sink.Lines())
	reports.mu.Lock()
	defer reports.mu.Unlock()
	require.Len(t, reports.errs, 1, "only the first is reported")
	assert.ErrorIs(t, reports.errs[0], ErrClosed)
}

func TestSamplerNilAllocatesNothing(t *testing.T) {
	h := NewHandler(io.Discard, &Options{})
	defer h.Close()
	r := recordAt(1)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.Handle(ctx, r) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.handleAttrs(ctx, fixedTime, slog.LevelInfo, "m", nil) }))
	assert.Zero(t, h.Stats().Sampled)
}

// reportingSampler is a MarkingSampler: bound, it refuses every record and
// reports them all in one marker from Report, which Close calls.
type reportingSampler struct{ binds atomic.Int32 }

var _ MarkingSampler = (*reportingSampler)(nil)

func (s *reportingSampler) Sample(time.Time, slog.Level, string, string) bool { return true }

func (s *reportingSampler) WithMarkers(mark func(level slog.Level, msg, logger string, n uint64) error) Sampler {
	s.binds.Add(1)
	return &boundReporter{mark: mark}
}

type boundReporter struct {
	mark    func(level slog.Level, msg, logger string, n uint64) error
	refused atomic.Uint64
}

func (b *boundReporter) Sample(time.Time, slog.Level, string, string) bool {
	b.refused.Add(1)
	return false
}

func (b *boundReporter) Report() error { return b.mark(slog.LevelWarn, "m", "db", b.refused.Swap(0)) }

// TestMarkingSamplerIsBoundOnce: NewHandler binds a MarkingSampler once
// and consults the Sampler it returns, whose markers the handler writes
// (at Close, through Report) and counts; a plain Sampler gets no markers.
func TestMarkingSamplerIsBoundOnce(t *testing.T) {
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	marking := &reportingSampler{}
	tests := []struct {
		name    string
		sampler Sampler
		lines   []string
	}{
		{"MarkingSampler", marking,
			[]string{`{"level":"WARN","msg":"suppressed 3 similar records","logger":"db","sampled_msg":"m"}`}},
		{"plain Sampler", &refuseAll{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sink memSink
			h := NewHandler(&sink, &Options{Features: FeatureOptions{Sampler: tt.sampler}, ReplaceAttr: noTime})
			l := slog.New(h)
			for range 3 {
				l.Info("m")
			}
			require.NoError(t, h.Close())
			st := h.Stats()
			assert.EqualValues(t, 3, st.Sampled)
			assert.EqualValues(t, len(tt.lines), st.SampleMarkers)
			assert.Equal(t, tt.lines, sink.Lines())
		})
	}
	assert.EqualValues(t, 1, marking.binds.Load(), "bound once")
}

// TestSampleMarkerSingular: one suppressed record is "1 similar
// record", not "1 similar records".
func TestSampleMarkerSingular(t *testing.T) {
	var sink memSink
	h := NewHandler(&sink, &Options{Features: FeatureOptions{Sampler: &reportingSampler{}}, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	slog.New(h).Info("m")
	require.NoError(t, h.Close())
	assert.Equal(t, []string{`{"level":"WARN","msg":"suppressed 1 similar record","logger":"db","sampled_msg":"m"}`}, sink.Lines())
}
