package asyncbus

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of levelcounts.go: Stats counts the records logged at each level,
// on every path into the handler, and exactly under concurrency.

func TestBucketOf(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  int
	}{
		{-1 << 20, bucketOther},
		{LevelTrace - 1, bucketOther},
		{LevelTrace, bucketTrace},
		{slog.LevelDebug - 1, bucketTrace},
		{slog.LevelDebug, bucketDebug},
		{-1, bucketDebug}, // logr's V(1)
		{slog.LevelInfo, bucketInfo},
		{slog.LevelInfo + 3, bucketInfo},
		{slog.LevelWarn, bucketWarn},
		{slog.LevelError - 1, bucketWarn},
		{slog.LevelError, bucketError},
		{LevelFatal - 1, bucketError},
		{LevelFatal, bucketFatal},
		{1 << 20, bucketFatal},
	}
	for _, tc := range tests {
		t.Run(tc.level.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, bucketOf(tc.level))
		})
	}
}

// refuseMsg is a Sampler that refuses records whose message is msg.
type refuseMsg string

func (s refuseMsg) Sample(_ time.Time, _ slog.Level, msg, _ string) bool { return msg != string(s) }

// loggedOf returns the Logged fields of st in bucket order.
func loggedOf(st Stats) [levelBuckets]uint64 {
	return [levelBuckets]uint64{st.LoggedTrace, st.LoggedDebug, st.LoggedInfo, st.LoggedWarn, st.LoggedError, st.LoggedFatal, st.LoggedOther}
}

func TestLoggedCountsRecordsTakenByHandle(t *testing.T) {
	var out memSink
	var reports reportLog
	h := NewHandler(&out, &Options{
		OnError:   reports.onError,
		Level:     slog.LevelInfo,
		Features:  FeatureOptions{Sampler: refuseMsg("sampled"), FlightRecorder: &FlightRecorder{Size: 512}},
		SyncLevel: LevelFatal + 4, // a Fatal record here is not waited for
	})
	l := slog.New(h)
	ctx := context.Background()
	l.Log(ctx, LevelTrace-1, "other: below the recorder, not enabled")
	l.Debug("kept")
	l.Log(ctx, -1, "kept, V(1)")
	l.Debug("too large for the recorder: not kept, not counted", "pad", strings.Repeat("x", 600))
	l.Info("info")
	l.Info("sampled") // refused by the Sampler: not counted
	l.With("a", 1).WithGroup("g").Warn("warn")
	l.Error("error, triggers the kept records")
	l.Log(ctx, LevelFatal, "fatal")
	require.NoError(t, h.handleAttrs(ctx, time.Now(), slog.LevelInfo+2, "info+2 through HandleAttrs", nil))
	require.NoError(t, h.Handle(ctx, slog.NewRecord(time.Now(), LevelTrace-4, "other, handed to Handle", 0)))
	require.NoError(t, h.Flush())

	st := h.Stats()
	want := [levelBuckets]uint64{bucketDebug: 2, bucketInfo: 2, bucketWarn: 1, bucketError: 1, bucketFatal: 1, bucketOther: 1}
	assert.Equal(t, want, loggedOf(st))
	var sum uint64
	for _, n := range loggedOf(st) {
		sum += n
	}
	assert.Equal(t, st.Enqueued-st.SampleMarkers+st.RecorderKept, sum, "%+v", st)
	assert.Equal(t, uint64(2), st.RecorderKept)
	assert.Equal(t, uint64(1), st.Sampled)

	require.NoError(t, h.Close())
	assert.ErrorIs(t, h.Handle(ctx, slog.NewRecord(time.Now(), slog.LevelWarn, "after Close", 0)), ErrClosed)
	reports.requireClosedReport(t, "after Close")
	st = h.Stats()
	assert.Equal(t, uint64(2), st.LoggedWarn, "refused after Close: offered to the ring, counted")
	assert.Equal(t, uint64(1), st.DroppedClosed)
}

func TestLoggedCountsHandleAttrsFastPath(t *testing.T) {
	var out memSink
	h := NewHandler(&out, nil) // no state, recorder or stack: HandleAttrs encodes itself
	require.NoError(t, h.handleAttrs(context.Background(), time.Now(), slog.LevelWarn+1, "m", []slog.Attr{slog.Int("a", 1)}))
	require.NoError(t, h.Close())
	assert.Equal(t, [levelBuckets]uint64{bucketWarn: 1}, loggedOf(h.Stats()))
	assert.Len(t, out.Lines(), 1)
}

// lineEncoder is an output's own Encoder writing the message.
type lineEncoder struct{}

func (lineEncoder) WithAttrs([]slog.Attr) Encoder { return lineEncoder{} }
func (lineEncoder) WithGroup(string) Encoder      { return lineEncoder{} }
func (lineEncoder) AppendRecord(dst []byte, _ context.Context, r slog.Record, _ string, _ []slog.Attr) []byte {
	return append(append(dst, r.Message...), '\n')
}

func TestLoggedCountsWithPluggedEncoderAndSampleMarkers(t *testing.T) {
	var out memSink
	h, err := OpenWithEncoder(&out, lineEncoder{}, &Options{Features: FeatureOptions{Sampler: refuseMsg("none")}}) // the marker counter needs a Sampler
	require.NoError(t, err)
	l := slog.New(h)
	l.Info("a")
	l.Warn("b")
	require.NoError(t, h.writeSampleMarker(slog.LevelInfo, "m", "", 3)) // a marker: not counted
	require.NoError(t, h.Close())
	st := h.Stats()
	assert.Equal(t, [levelBuckets]uint64{bucketInfo: 1, bucketWarn: 1}, loggedOf(st))
	assert.Equal(t, []string{"a", "b", "suppressed 3 similar records"}, out.Lines())
}

func TestLoggedCountsExactUnderConcurrency(t *testing.T) {
	var out countingWriter
	h := NewHandler(&out, &Options{Level: LevelTrace})
	l := slog.New(h)
	levels := []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	var reads atomic.Int64
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Log(context.Background(), levels[(g+i)%len(levels)], "m", "i", i)
				if i%100 == 0 {
					_ = h.Stats() // Stats reads while others add
					reads.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, h.Close())
	per := uint64(goroutines * each / len(levels))
	assert.Equal(t, [levelBuckets]uint64{per, per, per, per, 0, 0, 0}, loggedOf(h.Stats()))
	assert.Positive(t, reads.Load())
}

func TestNextStripeMovesAndStaysNonzero(t *testing.T) {
	s := newStripe()
	seen := map[uint32]bool{}
	for range 64 {
		require.NotZero(t, s)
		seen[s&63] = true
		s = nextStripe(s)
	}
	assert.Greater(t, len(seen), 16, "a moving buffer visits many stripes")
}

// BenchmarkLevelCounts is the cost of counting one record from 4 goroutines
// at once (run with -cpu 4: b.RunParallel starts GOMAXPROCS goroutines):
//
//   - striped: the handler's counts, each goroutine counting on the
//     stripe of one buffer of its own;
//   - shared: one atomic counter that every goroutine adds to, the
//     contention striping avoids;
//   - none: the loop alone;
//   - pooled/striped, pooled/none: as Handle does, a buffer from bufPool
//     per record, with and without the count.
func BenchmarkLevelCounts(b *testing.B) {
	b.Run("striped", func(b *testing.B) {
		c := newLevelCounts()
		b.RunParallel(func(pb *testing.PB) {
			buf := bufPool.Get().(*buffer)
			for pb.Next() {
				c.add(slog.LevelInfo, buf)
			}
			bufPool.Put(buf)
		})
	})
	b.Run("shared", func(b *testing.B) {
		var n atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
	b.Run("none", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() { //nolint:revive // the loop alone is the baseline
			}
		})
	})
	b.Run("pooled/striped", func(b *testing.B) {
		c := newLevelCounts()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				buf := bufPool.Get().(*buffer)
				c.add(slog.LevelInfo, buf)
				bufPool.Put(buf)
			}
		})
	})
	b.Run("pooled/none", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				bufPool.Put(bufPool.Get().(*buffer))
			}
		})
	})
}
