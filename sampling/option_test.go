package sampling_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/sampling"
)

// This file tests a Sampler installed as asyncbus.Options.Features.Sampler: decided
// inside the asyncbus handler, markers written by it.

func newSampler(t testing.TB, cfg sampling.Config) *sampling.Sampler {
	t.Helper()
	s, err := sampling.NewSampler(cfg)
	require.NoError(t, err)
	return s
}

var base = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// kept is how many of n records of one key in one window are kept.
func kept(n, first, thereafter int) int {
	if n <= first {
		return n
	}
	k := first
	if thereafter > 0 {
		k += (n - first) / thereafter
	}
	return k
}

// TestOptionSamplerExactCounts: one producer, records spread over three
// ticks and three keys, through Handle and HandleAttrs: the records kept
// and the markers written are exactly what First/Thereafter give, and
// every counter agrees.
func TestOptionSamplerExactCounts(t *testing.T) {
	const first, thereafter, perKey = 3, 4, 25
	var buf syncBuffer
	s := newSampler(t, sampling.Config{First: first, Thereafter: thereafter})
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}, Level: slog.LevelDebug})
	ctx := context.Background()
	offered := 0
	named := h.Named("svc")
	for tick := range 3 {
		at := base.Add(time.Duration(tick) * time.Second)
		for i := range perKey {
			for k, lg := range []*asyncbus.Handler{h, named} {
				msg := fmt.Sprintf("key%d", k)
				if i%2 == 0 {
					require.NoError(t, lg.Handle(ctx, slog.NewRecord(at, slog.LevelInfo, msg, 0)))
				} else {
					require.NoError(t, handleAttrs(lg, ctx, at, slog.LevelInfo, msg, []slog.Attr{slog.Int("i", i)}))
				}
				offered++
			}
			require.NoError(t, h.Handle(ctx, slog.NewRecord(at, slog.LevelError, "exempt", 0)))
			offered++
		}
	}
	require.NoError(t, h.Close())
	lines := buf.lines(t)
	var records, markers, reported int
	for _, l := range lines {
		msg := l["msg"].(string)
		if n, ok := strings.CutPrefix(msg, "suppressed "); ok {
			var c int
			_, err := fmt.Sscanf(n, "%d similar record", &c) // "records" but for 1
			require.NoError(t, err)
			markers++
			reported += c
			assert.Equal(t, "INFO", l["level"])
			assert.Contains(t, []any{"key0", "key1"}, l[sampling.SuppressedMsgKey])
			if l[sampling.SuppressedMsgKey] == "key1" {
				assert.Equal(t, "svc", l["logger"], "the marker carries the logger name")
			}
			continue
		}
		records++
	}
	wantKept := 3 * (2*kept(perKey, first, thereafter) + perKey)
	assert.Equal(t, wantKept, records)
	assert.Equal(t, offered-wantKept, reported, "markers account for every refused record")
	assert.Equal(t, 6, markers, "one marker per sampled key per tick: at the next tick's first record, and at Close for the last")

	st := h.Stats()
	assert.Equal(t, uint64(offered-wantKept), st.Sampled)
	assert.Equal(t, uint64(markers), st.SampleMarkers)
	assert.Equal(t, uint64(offered)+st.SampleMarkers, st.Enqueued+st.Sampled)
	assert.Equal(t, st.Enqueued, st.Written)
	ss := s.Stats()
	assert.Equal(t, st.Sampled, ss.Suppressed)
	assert.Equal(t, ss.Suppressed, ss.Reported)
	assert.Equal(t, uint64(markers), ss.Markers)
}

// TestOptionSamplerConcurrent: producers on several goroutines, across
// ticks; under -race. Every kept record arrives once, in per-producer
// order, and Enqueued + Sampled == offered + SampleMarkers exactly.
func TestOptionSamplerConcurrent(t *testing.T) {
	const producers, perProducer = 6, 3000
	var buf syncBuffer
	s := newSampler(t, sampling.Config{First: 5, Thereafter: 7, Slots: 64})
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}, Ring: asyncbus.RingOptions{Capacity: 1 << 16}})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			lg := h.Named(fmt.Sprintf("p%d", p))
			for i := range perProducer {
				at := base.Add(time.Duration(i/500) * time.Second)
				msg := fmt.Sprintf("m%d", i%4)
				attrs := []slog.Attr{slog.Int("p", p), slog.Int("seq", i)}
				if i%3 == 0 {
					_ = handleAttrs(lg, context.Background(), at, slog.LevelInfo, msg, attrs)
					continue
				}
				r := slog.NewRecord(at, slog.LevelInfo, msg, 0)
				r.AddAttrs(attrs...)
				_ = lg.Handle(context.Background(), r)
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Close())
	last := make(map[int]int)
	var records, markers int
	var reported uint64
	for _, l := range buf.lines(t) {
		if msg := l["msg"].(string); strings.HasPrefix(msg, "suppressed ") {
			var n uint64
			_, err := fmt.Sscanf(msg, "suppressed %d similar record", &n) // "records" but for 1
			require.NoError(t, err)
			markers++
			reported += n
			continue
		}
		records++
		p, seq := int(l["p"].(float64)), int(l["seq"].(float64))
		prev, seen := last[p]
		require.True(t, !seen || seq > prev, "producer %d: seq %d after %d", p, seq, prev)
		last[p] = seq
	}
	st := h.Stats()
	offered := uint64(producers * perProducer)
	assert.Equal(t, offered+st.SampleMarkers, st.Enqueued+st.Sampled)
	assert.Equal(t, st.Enqueued, st.Written)
	assert.Zero(t, st.Dropped)
	assert.Equal(t, offered-st.Sampled, uint64(records))
	assert.Equal(t, st.Sampled, reported)
	assert.Equal(t, uint64(markers), st.SampleMarkers)
	ss := s.Stats()
	assert.Equal(t, ss.Suppressed, ss.Reported)
	assert.Equal(t, st.Sampled, ss.Suppressed)
	assert.Equal(t, uint64(records), ss.Kept)
}

// TestOptionSamplerMarkersNeverSampled: a Sampler that refuses every
// record of every level still gets its markers written.
func TestOptionSamplerMarkersNeverSampled(t *testing.T) {
	var buf syncBuffer
	s := newSampler(t, sampling.Config{Exempt: slog.Level(math.MaxInt)}) // First 0, Thereafter 0: refuse all
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}})
	for range 5 { // one window: a tick boundary would split the marker in two
		require.NoError(t, handleAttrs(h, context.Background(), base, slog.LevelWarn, "w", nil))
	}
	require.NoError(t, h.Close())
	lines := buf.lines(t)
	require.Len(t, lines, 1)
	assert.Equal(t, "suppressed 5 similar records", lines[0]["msg"])
	assert.Equal(t, "WARN", lines[0]["level"])
	st := h.Stats()
	assert.Equal(t, uint64(5), st.Sampled)
	assert.Equal(t, uint64(1), st.SampleMarkers)
	assert.Equal(t, uint64(1), st.Written)
}

// TestOptionSamplerRunTimeChange: SetConfig reaches a running handler.
func TestOptionSamplerRunTimeChange(t *testing.T) {
	var buf syncBuffer
	s := newSampler(t, sampling.Config{First: 1})
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}})
	logAt := func(l slog.Level, msg string) {
		require.NoError(t, handleAttrs(h, context.Background(), base, l, msg, nil)) // one window
	}
	for range 3 {
		logAt(slog.LevelInfo, "a") // 1 kept, 2 refused
	}
	require.NoError(t, s.SetConfig(sampling.Config{Off: true}))
	for range 3 {
		logAt(slog.LevelInfo, "off") // all kept
	}
	require.NoError(t, s.SetConfig(sampling.Config{First: 1, Exempt: slog.LevelWarn}))
	for range 3 {
		logAt(slog.LevelInfo, "b")          // 1 kept, 2 refused
		logAt(slog.LevelWarn, "exempt now") // all kept
	}
	require.NoError(t, h.Close())
	var msgs []string
	for _, l := range buf.lines(t) {
		msgs = append(msgs, l["msg"].(string))
	}
	assert.Equal(t, []string{"a", "off", "off", "off", "b", "exempt now", "exempt now", "exempt now",
		"suppressed 2 similar records", "suppressed 2 similar records"}, msgs)
	st := h.Stats()
	assert.Equal(t, uint64(4), st.Sampled)
	assert.Equal(t, uint64(2), st.SampleMarkers)
}

// TestOptionSamplerWithAttrsStateful: a derived handler (WithAttrs) is
// sampled once per record through HandleAttrs too, and markers carry no
// WithAttrs state.
func TestOptionSamplerWithAttrsStateful(t *testing.T) {
	var buf syncBuffer
	s := newSampler(t, sampling.Config{First: 2})
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: s}})
	w := h.WithAttrs([]slog.Attr{slog.Int("conn", 7)}).(*asyncbus.Handler)
	for range 4 {
		require.NoError(t, handleAttrs(w, context.Background(), base, slog.LevelInfo, "q", nil))
	}
	require.NoError(t, h.Close())
	lines := buf.lines(t)
	require.Len(t, lines, 3)
	assert.Equal(t, float64(7), lines[0]["conn"])
	assert.Equal(t, "suppressed 2 similar records", lines[2]["msg"])
	assert.NotContains(t, lines[2], "conn")
	assert.Equal(t, uint64(2), s.Stats().Kept, "one decision per record")
}

// BenchmarkOptionsSampler is the cost of Options.Features.Sampler on a handler
// writing to io.Discard: nil (off), set and keeping every record, set and
// refusing every record (no encoding).
func BenchmarkOptionsSampler(b *testing.B) {
	cases := []struct {
		name string
		cfg  *sampling.Config
	}{
		{"nil", nil},
		{"keeping", &sampling.Config{First: math.MaxInt32}},
		{"refusing", &sampling.Config{}},
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200))
	for _, via := range []string{"Handle", "Logger"} {
		for _, c := range cases {
			b.Run(via+"/"+c.name, func(b *testing.B) {
				var o asyncbus.Options
				if c.cfg != nil {
					o.Features.Sampler = newSampler(b, *c.cfg)
				}
				h := asyncbus.NewHandler(discard{}, &o)
				defer h.Close()
				log := slog.New(h)
				ctx := context.Background()
				b.ReportAllocs()
				if via == "Handle" {
					for b.Loop() {
						_ = h.Handle(ctx, r)
					}
					return
				}
				for b.Loop() {
					log.Info("request handled", "method", "GET", "status", 200)
				}
			})
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// handleAttrs is the handler's attribute path, as otelbridge reaches it
// (Handler.HandleAttrs); h is an *asyncbus.Handler.
func handleAttrs(h slog.Handler, ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	ah, ok := h.(*asyncbus.Handler)
	if !ok {
		return fmt.Errorf("%T is not an *asyncbus.Handler", h)
	}
	return ah.HandleAttrs(ctx, t, level, msg, attrs)
}
