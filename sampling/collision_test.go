package sampling_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markerSums returns, for the markers among rs, the sum of N per sampled
// message.
func markerSums(t testing.TB, rs []got) map[string]uint64 {
	t.Helper()
	_, markers := split(rs)
	sums := map[string]uint64{}
	for _, m := range markers {
		sums[m.attrs[sampling.SuppressedMsgKey].String()] += markerN(t, m)
	}
	return sums
}

// TestCollisionTwoHandlersOneSlot: two handlers, each with its own output,
// share one Sampler of one slot; six keys (three per handler) alternate in
// it, more than the slot holds, so keys are evicted and reported early.
// Every marker lands in the output of the handler that dropped the records,
// named after its own key, with that key's own count.
func TestCollisionTwoHandlersOneSlot(t *testing.T) {
	s := newSampler(t, sampling.Config{First: 2, Slots: 1})
	ca, cb := newCapture(), newCapture()
	ha, err := s.Handler(ca)
	require.NoError(t, err)
	hb, err := s.Handler(cb)
	require.NoError(t, err)
	const rounds = 20
	for range rounds {
		for k := range 3 {
			require.NoError(t, ha.Handle(context.Background(), record(t0, slog.LevelInfo, fmt.Sprint("a", k))))
			require.NoError(t, hb.Handle(context.Background(), record(t0, slog.LevelInfo, fmt.Sprint("b", k))))
		}
	}
	require.NoError(t, s.Report())

	for _, out := range []struct {
		name string
		c    *capture
	}{{"a", ca}, {"b", cb}} {
		recs, _ := split(out.c.records())
		want := map[string]uint64{}
		for k := range 3 {
			want[fmt.Sprint(out.name, k)] = rounds
		}
		for _, r := range recs {
			want[r.msg]-- // kept: not suppressed
		}
		assert.Equal(t, want, markerSums(t, out.c.records()), "output %s: its own keys, their own counts", out.name)
	}
	st := s.Stats()
	assert.Equal(t, uint64(2), st.Kept)
	assert.Equal(t, uint64(6*rounds-2), st.Suppressed)
	assert.Equal(t, st.Suppressed, st.Reported)
	assert.Zero(t, st.Unmarked)
	assert.Greater(t, st.Markers, uint64(6), "six keys in a four-way slot: evictions wrote markers early")
}

// TestDirectSampleUnmarked: records refused by Sample called directly
// share the slot with a Handler's key but are counted as Unmarked; they
// neither take nor lose the Handler's pending count.
func TestDirectSampleUnmarked(t *testing.T) {
	s := newSampler(t, sampling.Config{First: 1, Slots: 1})
	c := newCapture()
	h, err := s.Handler(c)
	require.NoError(t, err)
	for range 5 {
		require.NoError(t, h.Handle(context.Background(), record(t0, slog.LevelInfo, "m")))
	}
	for range 3 {
		assert.False(t, s.Sample(t0, slog.LevelInfo, "m", ""), "the slot's counter is past First")
	}
	require.NoError(t, s.Report())
	assert.Equal(t, map[string]uint64{"m": 4}, markerSums(t, c.records()))
	assert.Equal(t, sampling.Stats{Kept: 1, Suppressed: 7, Markers: 1, Reported: 4, Unmarked: 3}, s.Stats())
}

// TestStressCollisions: a two-slot Sampler shared by two handlers (two
// outputs, same messages), a WithMarkers binding and direct Sample calls,
// with Reports racing the producers and keys evicting each other. Every
// kept record is received exactly once, in its producer's order; every
// marker is in the output of the handler (or binding) that dropped its
// records, and per target and key the markers add up exactly to the
// records refused; Suppressed == Reported + Unmarked.
func TestStressCollisions(t *testing.T) {
	s := newSampler(t, sampling.Config{First: 20, Thereafter: 5, Tick: 2 * time.Millisecond, Slots: 2})
	ca, cb := newCapture(), newCapture()
	ha, err := s.Handler(ca)
	require.NoError(t, err)
	hb, err := s.Handler(cb)
	require.NoError(t, err)
	var markMu sync.Mutex
	bound := map[string]uint64{} // markers of the binding, per "logger/msg"
	var boundMarkers uint64
	bs := s.WithMarkers(func(_ slog.Level, msg, logger string, n uint64) error {
		markMu.Lock()
		bound[logger+"/"+msg] += n
		boundMarkers++
		markMu.Unlock()
		return nil
	})

	const perProducer, keys = 4000, 6
	handlers := []*sampling.Handler{ha, hb, ha, hb}
	sent := make([]map[string]uint64, len(handlers)) // per producer, per message
	var boundRefused, directRefused map[string]uint64
	var directTotal uint64
	var wg sync.WaitGroup
	for p, h := range handlers {
		sent[p] = map[string]uint64{}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 11))
			log := slog.New(h)
			for i := range perProducer {
				msg := fmt.Sprint("key ", rng.IntN(keys))
				sent[p][msg]++
				log.Info(msg, "p", p, "i", i)
			}
		})
	}
	wg.Go(func() { // a binding, as an asyncbus.Handler uses: refusals reported through mark
		boundRefused = map[string]uint64{}
		rng := rand.New(rand.NewPCG(100, 11))
		for range perProducer {
			logger, msg := fmt.Sprint("l", rng.IntN(2)), fmt.Sprint("key ", rng.IntN(keys))
			if !bs.Sample(time.Now(), slog.LevelInfo, msg, logger) {
				boundRefused[logger+"/"+msg]++
			}
		}
	})
	wg.Go(func() { // direct Sample calls: refusals are Unmarked
		directRefused = map[string]uint64{}
		rng := rand.New(rand.NewPCG(200, 11))
		for range perProducer {
			msg := fmt.Sprint("key ", rng.IntN(keys))
			if !s.Sample(time.Now(), slog.LevelInfo, msg, "") {
				directRefused[msg]++
				directTotal++
			}
		}
	})
	wg.Go(func() { // on-demand sweeps race with evictions and lazy sweeps
		for range 300 {
			assert.NoError(t, s.Report())
		}
	})
	wg.Wait()
	require.NoError(t, s.Report())

	var reported, markers uint64
	for o, out := range []struct {
		h *sampling.Handler
		c *capture
	}{{ha, ca}, {hb, cb}} {
		all := out.c.records()
		recs, ms := split(all)
		markers += uint64(len(ms))
		want := map[string]uint64{}
		last := map[int64]int64{}
		for p, h := range handlers {
			if h == out.h {
				for msg, n := range sent[p] {
					want[msg] += n
				}
				last[int64(p)] = -1
			}
		}
		for _, r := range recs {
			p, i := r.attrs["p"].Int64(), r.attrs["i"].Int64()
			prev, ok := last[p]
			require.True(t, ok, "output %d received producer %d's record", o, p)
			require.Greater(t, i, prev, "producer %d out of order or duplicated", p)
			last[p] = i
			want[r.msg]--
		}
		for msg, n := range want {
			if n == 0 {
				delete(want, msg)
			}
		}
		got := markerSums(t, all)
		assert.Equal(t, want, got, "output %d: markers per key == records its handler refused", o)
		for _, n := range got {
			reported += n
		}
	}
	markMu.Lock()
	for _, n := range bound {
		reported += n
	}
	markers += boundMarkers
	assert.Equal(t, boundRefused, bound, "binding: markers per key == records it refused")
	markMu.Unlock()

	st := s.Stats()
	assert.Equal(t, directTotal, st.Unmarked)
	assert.Equal(t, st.Suppressed, st.Reported+st.Unmarked)
	assert.Equal(t, reported, st.Reported)
	assert.Equal(t, markers, st.Markers)
	assert.NotZero(t, st.Unmarked)
	assert.NotEmpty(t, boundRefused)
	assert.NotEmpty(t, directRefused)
}
