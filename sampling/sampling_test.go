package sampling_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
	"github.com/asyncbus/asyncbus/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// got is one record received by a capture handler.
type got struct {
	level slog.Level
	msg   string
	attrs map[string]slog.Value
}

// capture is a slog.Handler keeping what it receives; derived handlers
// share the store.
type capture struct {
	store *store
	with  []slog.Attr
}

type store struct {
	mu   sync.Mutex
	recs []got
}

func newCapture() *capture { return &capture{store: &store{}} }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	g := got{level: r.Level, msg: r.Message, attrs: map[string]slog.Value{}}
	for _, a := range c.with {
		g.attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool { g.attrs[a.Key] = a.Value; return true })
	c.store.mu.Lock()
	c.store.recs = append(c.store.recs, g)
	c.store.mu.Unlock()
	return nil
}

func (c *capture) WithAttrs(as []slog.Attr) slog.Handler {
	return &capture{store: c.store, with: append(append([]slog.Attr(nil), c.with...), as...)}
}
func (c *capture) WithGroup(string) slog.Handler { return c }

func (c *capture) records() []got {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return append([]got(nil), c.store.recs...)
}

// split separates markers from ordinary records.
func split(rs []got) (recs, markers []got) {
	for _, r := range rs {
		if _, ok := r.attrs[sampling.SuppressedMsgKey]; ok {
			markers = append(markers, r)
		} else {
			recs = append(recs, r)
		}
	}
	return recs, markers
}

// markerN parses N from a marker's message.
func markerN(t testing.TB, m got) uint64 {
	t.Helper()
	var n uint64
	_, err := fmt.Sscanf(m.msg, "suppressed %d similar record", &n) // "records" but for 1
	require.NoError(t, err, m.msg)
	return n
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // on a whole second

func record(t time.Time, l slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(t, l, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

func newHandler(t *testing.T, next slog.Handler, cfg sampling.Config) *sampling.Handler {
	t.Helper()
	h, err := sampling.NewHandler(next, cfg)
	require.NoError(t, err)
	return h
}

func TestFirstThenEveryMth(t *testing.T) {
	tests := []struct {
		first, thereafter int
		n                 int
		want              []int // indices (1-based) kept
	}{
		{3, 5, 20, []int{1, 2, 3, 8, 13, 18}},
		{1, 0, 10, []int{1}},
		{0, 0, 5, nil},
		{0, 2, 6, []int{2, 4, 6}},
		{5, 1, 7, []int{1, 2, 3, 4, 5, 6, 7}},
		{10, 10, 4, []int{1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("first=%d,thereafter=%d", tc.first, tc.thereafter), func(t *testing.T) {
			c := newCapture()
			h := newHandler(t, c, sampling.Config{First: tc.first, Thereafter: tc.thereafter})
			for i := 1; i <= tc.n; i++ {
				require.NoError(t, h.Handle(context.Background(), record(t0.Add(time.Duration(i)), slog.LevelInfo, "m", slog.Int("i", i))))
			}
			var kept []int
			for _, r := range c.records() {
				kept = append(kept, int(r.attrs["i"].Int64()))
			}
			assert.Equal(t, tc.want, kept)
			st := h.Sampler().Stats()
			assert.Equal(t, uint64(len(tc.want)), st.Kept)
			assert.Equal(t, uint64(tc.n-len(tc.want)), st.Suppressed)
		})
	}
}

func TestWindowsFollowRecordTime(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 2, Tick: 100 * time.Millisecond})
	send := func(at time.Duration, i int) {
		require.NoError(t, h.Handle(context.Background(), record(t0.Add(at), slog.LevelInfo, "m", slog.Int("i", i))))
	}
	send(0, 1)
	send(10*time.Millisecond, 2)
	send(20*time.Millisecond, 3)  // third in window 0: dropped
	send(100*time.Millisecond, 4) // window 1: fresh
	send(150*time.Millisecond, 5)
	send(50*time.Millisecond, 6)  // late record from window 0 counts in window 1: dropped
	send(250*time.Millisecond, 7) // window 2
	recs, markers := split(c.records())
	var kept []int
	for _, r := range recs {
		kept = append(kept, int(r.attrs["i"].Int64()))
	}
	assert.Equal(t, []int{1, 2, 4, 5, 7}, kept)
	// Window 1's first record swept window 0's drop, window 2's first swept window 1's.
	require.Len(t, markers, 2)
	for _, m := range markers {
		assert.Equal(t, uint64(1), markerN(t, m))
		assert.Equal(t, "m", m.attrs[sampling.SuppressedMsgKey].String())
		assert.Equal(t, slog.LevelInfo, m.level)
	}
}

func TestMarkers(t *testing.T) {
	c := newCapture()
	// Keys that share a slot share its window counter (TestCollisionsOnlyStricter):
	// take a sampler whose random seed puts this test's three keys in
	// three slots, so that the counts below are each key's own.
	var h *sampling.Handler
	for i := 0; ; i++ {
		require.Less(t, i, 100, "no seed puts the keys in distinct slots")
		h = newHandler(t, c, sampling.Config{First: 2})
		slots := map[uint64]bool{
			sampling.SlotOf(h, slog.LevelWarn, "disk slow"):   true,
			sampling.SlotOf(h, slog.LevelDebug, "cache miss"): true,
			sampling.SlotOf(h, slog.LevelInfo, "other"):       true,
		}
		if len(slots) == 3 {
			break
		}
	}
	ctx := context.Background()
	for range 10 {
		require.NoError(t, h.Handle(ctx, record(t0, slog.LevelWarn, "disk slow")))
	}
	for range 5 {
		require.NoError(t, h.Handle(ctx, record(t0, slog.LevelDebug, "cache miss")))
	}
	_, markers := split(c.records())
	assert.Empty(t, markers, "nothing is reported within the tick")
	// The first record of the next tick, of any key, sweeps.
	require.NoError(t, h.Handle(ctx, record(t0.Add(time.Second), slog.LevelInfo, "other")))
	_, markers = split(c.records())
	require.Len(t, markers, 2)
	byMsg := map[string]got{}
	for _, m := range markers {
		byMsg[m.attrs[sampling.SuppressedMsgKey].String()] = m
	}
	assert.Equal(t, "suppressed 8 similar records", byMsg["disk slow"].msg)
	assert.Equal(t, slog.LevelWarn, byMsg["disk slow"].level)
	assert.Equal(t, "suppressed 3 similar records", byMsg["cache miss"].msg)
	assert.Equal(t, slog.LevelDebug, byMsg["cache miss"].level)
	assert.Equal(t, sampling.Stats{Kept: 5, Suppressed: 11, Markers: 2, Reported: 11}, h.Sampler().Stats())

	// Report sweeps on demand; a second Report has nothing left. "other"
	// had one record in this tick: one more is kept, three dropped.
	for range 4 {
		require.NoError(t, h.Handle(ctx, record(t0.Add(time.Second), slog.LevelInfo, "other")))
	}
	require.NoError(t, h.Sampler().Report())
	require.NoError(t, h.Sampler().Report())
	_, markers = split(c.records())
	require.Len(t, markers, 3)
	assert.Equal(t, "suppressed 3 similar records", markers[2].msg)
	assert.Equal(t, sampling.Stats{Kept: 6, Suppressed: 14, Markers: 3, Reported: 14}, h.Sampler().Stats())
}

func TestExempt(t *testing.T) {
	lv := new(slog.LevelVar)
	lv.Set(slog.LevelWarn)
	tests := []struct {
		name   string
		exempt slog.Leveler
		level  slog.Level
		kept   int
	}{
		{"error exempt by default", nil, slog.LevelError, 10},
		{"above error too", nil, asyncbus.LevelFatal, 10},
		{"warn sampled by default", nil, slog.LevelWarn, 1},
		{"custom exempt", slog.LevelWarn, slog.LevelWarn, 10},
		{"dynamic exempt", lv, slog.LevelWarn, 10},
		{"dynamic below", lv, slog.LevelInfo, 1},
		{"nothing exempt", slog.Level(math.MaxInt), slog.LevelError, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture()
			h := newHandler(t, c, sampling.Config{First: 1, Exempt: tc.exempt})
			for range 10 {
				require.NoError(t, h.Handle(context.Background(), record(t0, tc.level, "m")))
			}
			assert.Len(t, c.records(), tc.kept)
			st := h.Sampler().Stats()
			if tc.kept == 10 {
				assert.Equal(t, sampling.Stats{}, st, "exempt records are not counted")
			} else {
				assert.Equal(t, sampling.Stats{Kept: 1, Suppressed: 9}, st)
			}
		})
	}
}

func TestKeysAreIndependent(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 2, Slots: 1 << 16})
	db := h.Named("db")
	// The same message at another level or from another logger is another
	// key. Pick messages whose four keys fall in four slots (the seed is
	// random), so that the test measures independence, not a collision.
	var msgs [2]string
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "cannot find keys in distinct slots")
		msgs = [2]string{fmt.Sprint("message ", i), fmt.Sprint("other ", i)}
		slots := map[uint64]bool{
			sampling.SlotOf(h, slog.LevelInfo, msgs[0]):  true,
			sampling.SlotOf(h, slog.LevelInfo, msgs[1]):  true,
			sampling.SlotOf(h, slog.LevelDebug, msgs[0]): true,
			sampling.SlotOf(db, slog.LevelInfo, msgs[0]): true,
		}
		if len(slots) == 4 {
			break
		}
	}
	for range 5 {
		for _, hh := range []*sampling.Handler{h, db} {
			_ = hh.Handle(context.Background(), record(t0, slog.LevelInfo, msgs[0]))
		}
		_ = h.Handle(context.Background(), record(t0, slog.LevelInfo, msgs[1]))
		_ = h.Handle(context.Background(), record(t0, slog.LevelDebug, msgs[0]))
	}
	assert.Len(t, c.records(), 8, "2 kept of each of 4 keys")
}

// TestCollisionsOnlyStricter: with one slot, all keys share one counter:
// fewer records are kept, never more; and the markers still count each
// key's own records under its own message, though ten keys alternate in a
// slot that holds four.
func TestCollisionsOnlyStricter(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 3, Slots: 1})
	for i := range 30 {
		_ = h.Handle(context.Background(), record(t0, slog.LevelInfo, fmt.Sprintf("key %d", i%10)))
	}
	recs, _ := split(c.records())
	assert.Len(t, recs, 3)
	require.NoError(t, h.Sampler().Report())
	_, markers := split(c.records())
	perKey := map[string]uint64{}
	for _, m := range markers {
		perKey[m.attrs[sampling.SuppressedMsgKey].String()] += markerN(t, m)
	}
	want := map[string]uint64{}
	for k := range 10 {
		want[fmt.Sprintf("key %d", k)] = 3 // each key logged 3 times...
	}
	for k := range 3 {
		want[fmt.Sprintf("key %d", k)] = 2 // ...and the first 3 records (keys 0-2) kept
	}
	assert.Equal(t, want, perKey, "each key's suppressed records reported under its own message")
	st := h.Sampler().Stats()
	assert.Equal(t, sampling.Stats{Kept: 3, Suppressed: 27, Markers: uint64(len(markers)), Reported: 27}, st)
}

func TestSetConfig(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 1})
	s := h.Sampler()
	send := func(n int, at time.Time) {
		for range n {
			_ = h.Handle(context.Background(), record(at, slog.LevelInfo, "m"))
		}
	}
	send(3, t0) // 1 kept
	require.NoError(t, s.SetConfig(sampling.Config{First: 5}))
	send(3, t0) // counts 4..6 of the window: 4 and 5 kept
	assert.Equal(t, sampling.Stats{Kept: 3, Suppressed: 3}, s.Stats())
	require.NoError(t, s.SetConfig(sampling.Config{First: 5, Off: true}))
	send(10, t0)
	assert.Equal(t, sampling.Stats{Kept: 3, Suppressed: 3}, s.Stats(), "Off passes on uncounted")
	assert.Len(t, c.records(), 13)
	// A new Tick starts new windows even at the same time.
	require.NoError(t, s.SetConfig(sampling.Config{First: 1, Thereafter: 0, Tick: time.Minute}))
	send(2, t0)
	assert.Equal(t, uint64(4), s.Stats().Kept)
	assert.Equal(t, time.Minute, s.Config().Tick)
	assert.Equal(t, 1024, s.Config().Slots)

	require.Error(t, s.SetConfig(sampling.Config{First: -1}))
	require.Error(t, s.SetConfig(sampling.Config{Slots: 8}))
	require.NoError(t, s.SetConfig(sampling.Config{Slots: 1024, First: 2}))
	assert.Equal(t, 2, s.Config().First, "a valid config replaces the old")
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  sampling.Config
		ok   bool
	}{
		{"zero", sampling.Config{}, true},
		{"negative first", sampling.Config{First: -1}, false},
		{"negative thereafter", sampling.Config{Thereafter: -1}, false},
		{"negative tick", sampling.Config{Tick: -time.Second}, false},
		{"tick too small", sampling.Config{Tick: time.Microsecond}, false},
		{"tick 1ms", sampling.Config{Tick: time.Millisecond}, true},
		{"negative slots", sampling.Config{Slots: -1}, false},
		{"too many slots", sampling.Config{Slots: 1<<20 + 1}, false},
	}
	if strconv.IntSize == 64 { // an int this large exists on 64-bit targets only
		huge := int64(1) << 40
		tests = append(tests, struct {
			name string
			cfg  sampling.Config
			ok   bool
		}{"huge first", sampling.Config{First: int(huge)}, false})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sampling.NewHandler(newCapture(), tc.cfg)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	_, err := sampling.NewHandler(nil, sampling.Config{})
	assert.Error(t, err)
	s, err := sampling.NewSampler(sampling.Config{Slots: 1000})
	require.NoError(t, err)
	assert.Equal(t, 1024, s.Config().Slots, "rounded up to a power of two")
	assert.Equal(t, time.Second, s.Config().Tick)
}

// syncBuffer is a syncbuf.Buffer whose JSON lines the tests decode.
type syncBuffer struct{ syncbuf.Buffer }

func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// TestIntoAsyncbus: kept records and markers reach an asyncbus handler;
// Named loggers are part of the key and markers carry the logger name but
// not the WithAttrs state of the handler that dropped the records. The
// records carry one fixed time, so all four fall in one window (wall-clock
// records could straddle a tick boundary and be counted in two).
func TestIntoAsyncbus(t *testing.T) {
	var buf syncBuffer
	ab := asyncbus.NewHandler(&buf, &asyncbus.Options{Level: slog.LevelDebug})
	h := newHandler(t, ab, sampling.Config{First: 1})
	log := h.Named("db").WithAttrs([]slog.Attr{slog.Int("conn", 7)})
	for range 4 {
		require.NoError(t, log.Handle(context.Background(), record(t0, slog.LevelInfo, "query slow", slog.Int("ms", 900))))
	}
	require.NoError(t, h.Sampler().Report())
	require.NoError(t, ab.Close())
	lines := buf.lines(t)
	require.Len(t, lines, 2)
	assert.Equal(t, "query slow", lines[0]["msg"])
	assert.Equal(t, "db", lines[0]["logger"])
	assert.Equal(t, float64(7), lines[0]["conn"])
	assert.Equal(t, "suppressed 3 similar records", lines[1]["msg"])
	assert.Equal(t, "INFO", lines[1]["level"])
	assert.Equal(t, "db", lines[1]["logger"])
	assert.Equal(t, "query slow", lines[1][sampling.SuppressedMsgKey])
	assert.NotContains(t, lines[1], "conn")
	assert.Equal(t, uint64(2), ab.Stats().Written)
}

// TestNamedGenericHandler: with a handler that has no logger names, the
// name still keys sampling and markers carry it under "logger".
func TestNamedGenericHandler(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 1})
	db := h.Named("db").Named("pool")
	for range 3 {
		_ = db.Handle(context.Background(), record(t0, slog.LevelInfo, "m"))
	}
	require.NoError(t, h.Sampler().Report())
	_, markers := split(c.records())
	require.Len(t, markers, 1)
	assert.Equal(t, "db.pool", markers[0].attrs[sampling.DefaultLoggerKey].String())
	assert.Same(t, h, h.Named(""))
}

// TestStress: producers log concurrently (with exempt records, several
// keys, config swaps and sweeps racing); every offered record is either
// received exactly once, in its producer's order, or counted as
// suppressed, and the markers account for every suppressed record.
func TestStress(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 50, Thereafter: 7, Tick: 5 * time.Millisecond, Slots: 64})
	const producers, perProducer = 6, 3000
	var wg sync.WaitGroup
	var exempt [producers]int
	for p := range producers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 9))
			log := slog.New(h.Named(fmt.Sprint("p", p%2)))
			for i := range perProducer {
				l := slog.LevelInfo
				if rng.IntN(20) == 0 {
					l = slog.LevelError
					exempt[p]++
				}
				log.Log(context.Background(), l, fmt.Sprint("key ", rng.IntN(5)), "p", p, "i", i)
			}
		})
	}
	wg.Go(func() { // config swaps and on-demand sweeps race with the producers
		for i := range 200 {
			_ = h.Sampler().SetConfig(sampling.Config{First: 20 + i%40, Thereafter: 1 + i%9, Tick: 5 * time.Millisecond})
			_ = h.Sampler().Report()
		}
	})
	wg.Wait()
	require.NoError(t, h.Sampler().Report())

	recs, markers := split(c.records())
	last := map[int64]int64{}
	for p := range producers {
		last[int64(p)] = -1
	}
	for _, r := range recs {
		p, i := r.attrs["p"].Int64(), r.attrs["i"].Int64()
		require.Greater(t, i, last[p], "producer %d out of order or duplicated", p)
		last[p] = i
	}
	totalExempt := 0
	for _, n := range exempt {
		totalExempt += n
	}
	st := h.Sampler().Stats()
	assert.Equal(t, uint64(len(recs)-totalExempt), st.Kept)
	assert.Equal(t, uint64(producers*perProducer), st.Kept+st.Suppressed+uint64(totalExempt))
	var reported uint64
	for _, m := range markers {
		reported += markerN(t, m)
	}
	assert.Equal(t, st.Suppressed, reported)
	assert.Equal(t, st.Suppressed, st.Reported)
	assert.Equal(t, uint64(len(markers)), st.Markers)
	assert.NotZero(t, st.Suppressed)
}

// TestFutureRecordDoesNotStopSampling: one record stamped ahead of the
// clock (a skewed remote clock, a bad caller) counts in the tick after the
// clock's at the latest, so it disturbs its key's windows for at most two
// ticks and delays the lazy sweep by at most one: afterwards each key again
// keeps First records per tick, and markers are written at each tick's
// first record, before Report. The clock follows the records, half a tick
// into each.
func TestFutureRecordDoesNotStopSampling(t *testing.T) {
	const ticks = 5
	tests := []struct {
		name   string
		stray  time.Duration // how far after t0 the stray record of key a is stamped; 0: none
		keptA  [ticks]int    // key a's records kept in each tick (besides the stray)
		sweeps int           // ticks whose first record wrote a's marker, before Report
	}{
		{"no stray record", 0, [ticks]int{2, 2, 2, 2, 2}, 4},
		{"stray in the clock's tick", 200 * time.Millisecond, [ticks]int{1, 2, 2, 2, 2}, 4},
		// Ahead: counted in the tick after the clock's, its own or clamped.
		{"stray one tick ahead", time.Second, [ticks]int{1, 0, 2, 2, 2}, 3},
		{"stray ten ticks ahead", 10 * time.Second, [ticks]int{1, 0, 2, 2, 2}, 3},
		{"stray 1000 hours ahead", 1000 * time.Hour, [ticks]int{1, 0, 2, 2, 2}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture()
			h := newHandler(t, c, sampling.Config{First: 2, Tick: time.Second})
			now := t0.Add(500 * time.Millisecond)
			sampling.SetClock(h.Sampler(), func() time.Time { return now })
			b := "b"
			for i := 0; sampling.SlotOf(h, slog.LevelInfo, b) == sampling.SlotOf(h, slog.LevelInfo, "a"); i++ {
				b = fmt.Sprintf("b%d", i) // keys in separate slots: no shared counter
			}
			send := func(at time.Time, msg string, tick int) {
				require.NoError(t, h.Handle(context.Background(), record(at, slog.LevelInfo, msg, slog.Int("tick", tick))))
			}
			sent := 0
			if tc.stray > 0 {
				send(t0.Add(tc.stray), "a", -1)
				sent++
			}
			markersBefore := 0
			for tick := range ticks {
				at := t0.Add(time.Duration(tick) * time.Second)
				now = at.Add(500 * time.Millisecond)
				for range 5 {
					send(at, "a", tick)
					send(at, b, tick)
					sent += 2
				}
			}
			_, markers := split(c.records())
			for _, m := range markers {
				if m.attrs[sampling.SuppressedMsgKey].String() == "a" {
					markersBefore++
				}
			}
			assert.Equal(t, tc.sweeps, markersBefore, "a's markers written by the lazy sweeps, before Report")
			require.NoError(t, h.Sampler().Report())

			recs, _ := split(c.records())
			var keptA, keptB [ticks]int
			stray := 0
			for _, r := range recs {
				tick := int(r.attrs["tick"].Int64())
				switch {
				case tick < 0:
					stray++
				case r.msg == "a":
					keptA[tick]++
				default:
					keptB[tick]++
				}
			}
			if tc.stray > 0 {
				assert.Equal(t, 1, stray, "the stray record is the first of its window")
			}
			assert.Equal(t, tc.keptA, keptA, "key a per tick")
			assert.Equal(t, [ticks]int{2, 2, 2, 2, 2}, keptB, "key b is not disturbed")
			st := h.Sampler().Stats()
			assert.Equal(t, uint64(sent), st.Kept+st.Suppressed)
			assert.Equal(t, st.Suppressed, st.Reported, "every dropped record reported")
		})
	}
}

// TestRecordWithoutTimeUsesTheClock: a record with a zero time counts in
// the clock's tick.
func TestRecordWithoutTimeUsesTheClock(t *testing.T) {
	c := newCapture()
	h := newHandler(t, c, sampling.Config{First: 1, Tick: time.Second})
	now := t0
	sampling.SetClock(h.Sampler(), func() time.Time { return now })
	ctx := context.Background()
	require.NoError(t, h.Handle(ctx, record(time.Time{}, slog.LevelInfo, "m")))
	require.NoError(t, h.Handle(ctx, record(t0.Add(100*time.Millisecond), slog.LevelInfo, "m"))) // same tick: dropped
	now = t0.Add(time.Second)
	require.NoError(t, h.Handle(ctx, record(time.Time{}, slog.LevelInfo, "m"))) // next tick: kept, sweeps
	recs, markers := split(c.records())
	assert.Len(t, recs, 2)
	require.Len(t, markers, 1)
	assert.Equal(t, uint64(1), markerN(t, markers[0]))
}
