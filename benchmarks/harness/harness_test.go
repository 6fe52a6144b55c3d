package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain serves the child processes of TestRunIsolated.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ServeChild(testContestants(), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// dropper is a test contestant that drops every k-th record, counting the
// drops, and writes one JSON drop-marker line on Flush, like asyncbus.
type dropper struct {
	h       slog.Handler
	every   uint64
	n       atomic.Uint64 // records seen; atomic because producers race on it
	dropped atomic.Uint64 // drops not yet reported; atomic for the same reason
}

func (d *dropper) Enabled(context.Context, slog.Level) bool { return true }

func (d *dropper) Handle(ctx context.Context, r slog.Record) error {
	if d.n.Add(1)%d.every == 0 {
		d.dropped.Add(1)
		return nil
	}
	return d.h.Handle(ctx, r)
}

func (d *dropper) WithAttrs([]slog.Attr) slog.Handler { return d }

func (d *dropper) WithGroup(string) slog.Handler { return d }

func (d *dropper) Flush() error {
	if n := d.dropped.Swap(0); n > 0 {
		r := slog.NewRecord(time.Now(), slog.LevelWarn, DropMarkerMsg, 0)
		r.AddAttrs(slog.Uint64("dropped", n))
		return d.h.Handle(context.Background(), r)
	}
	return nil
}

// stats lets handlerStats find a Stats method.
type fakeStats struct {
	Enqueued uint64
	Depth    int
	Neg      int
	Name     string
	hidden   uint64
}

// fakeDrainerStats lets handlerStats find a DrainerStats method, as
// asyncbus's handler has.
type fakeDrainerStats struct {
	Parks uint64
}

type statsHandler struct{ dropper }

func (s *statsHandler) Stats() fakeStats {
	return fakeStats{Enqueued: s.n.Load(), Depth: 3, Neg: -1, Name: "x", hidden: 9}
}

func (s *statsHandler) DrainerStats() *fakeDrainerStats { return &fakeDrainerStats{Parks: 2} }

type noop struct{}

func (noop) Enabled(context.Context, slog.Level) bool { return true }

func (noop) Handle(context.Context, slog.Record) error { return nil }

func (n noop) WithAttrs([]slog.Attr) slog.Handler { return n }

func (n noop) WithGroup(string) slog.Handler { return n }

func testContestants() []Contestant {
	return []Contestant{
		{Name: "slog-json", New: func(f *os.File) (slog.Handler, func() error, error) {
			return slog.NewJSONHandler(f, nil), nil, nil
		}},
		{Name: "slog-text", New: func(f *os.File) (slog.Handler, func() error, error) {
			return slog.NewTextHandler(f, nil), nil, nil
		}},
		{Name: "dropper", New: func(f *os.File) (slog.Handler, func() error, error) {
			d := &statsHandler{dropper{h: slog.NewJSONHandler(f, nil), every: 7}}
			return d, d.Flush, nil
		}},
		{Name: "noop", Discards: true, New: func(*os.File) (slog.Handler, func() error, error) {
			return noop{}, nil, nil
		}},
	}
}

func contestant(t *testing.T, name string) Contestant {
	for _, c := range testContestants() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no contestant %q", name)
	return Contestant{}
}

func TestPerGoroutineCoversN(t *testing.T) {
	for _, tt := range []struct{ n, g int }{{1, 1}, {10, 3}, {2000, 16}, {7, 7}} {
		sum := 0
		for g := 0; g < tt.g; g++ {
			sum += perGoroutine(tt.n, tt.g, g)
		}
		assert.Equal(t, tt.n, sum, "n=%d g=%d", tt.n, tt.g)
	}
}

func TestMeasureEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		goroutines int
		every      int
	}{
		{"slog-json", 1, 1},
		{"slog-json", 4, 1},
		{"slog-text", 3, 10},
		{"dropper", 4, 1},
		{"noop", 2, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/g=%d", tt.name, tt.goroutines), func(t *testing.T) {
			dir := t.TempDir()
			const n = 2000
			s, err := Measure(contestant(t, tt.name), Job{Contestant: tt.name, Goroutines: tt.goroutines, N: n, SampleEvery: tt.every, TempDir: dir})
			require.NoError(t, err)
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, left, "temporary file removed")

			assert.Equal(t, n, s.N)
			assert.Equal(t, tt.goroutines, s.Goroutines)
			assert.Greater(t, s.RecordsPerSec, 0.0)
			assert.Greater(t, s.ElapsedNS, int64(0))
			assert.GreaterOrEqual(t, s.Samples, n/tt.every)
			assert.LessOrEqual(t, s.Samples, n/tt.every+tt.goroutines)
			assert.LessOrEqual(t, s.P50NS, s.P99NS)
			assert.LessOrEqual(t, s.P99NS, s.P999NS)
			assert.LessOrEqual(t, s.P999NS, s.MaxNS)
			assert.Greater(t, s.AllocsPerRecord, 0.0, "slog's front end allocates for 7 attrs")
			assert.Greater(t, s.PeakRSSBytes, int64(0))
			assert.True(t, s.Count.Verified())
			assert.Zero(t, s.IdleWindowNS)
			switch tt.name {
			case "noop":
				assert.Zero(t, s.Count.Lines)
				assert.Zero(t, s.FileBytes)
				assert.Zero(t, s.Lost)
			case "dropper":
				assert.Equal(t, int64(n/7), s.Lost)
				assert.Equal(t, uint64(n/7), s.Count.MarkerDropped)
				assert.Equal(t, int64(1), s.Count.Markers)
				assert.Zero(t, s.Unaccounted)
				assert.Equal(t, map[string]uint64{"Enqueued": n, "Depth": 3, "Parks": 2}, s.HandlerStats)
			default:
				assert.Zero(t, s.Lost)
				assert.Zero(t, s.Unaccounted)
				assert.Equal(t, int64(n), s.Count.Unique)
				assert.Greater(t, s.FileBytes, int64(n*150))
			}
		})
	}
}

func TestMeasureIdleWindow(t *testing.T) {
	s, err := Measure(contestant(t, "slog-json"), Job{Contestant: "slog-json", Goroutines: 1, N: 100, SampleEvery: 1, Idle: 20 * time.Millisecond, TempDir: t.TempDir()})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, s.IdleWindowNS, (20 * time.Millisecond).Nanoseconds())
	assert.GreaterOrEqual(t, s.IdleCPUPercent, 0.0)
}

type closeRecorder struct {
	noop
	closed chan struct{}
	err    error
}

func (c *closeRecorder) Close() error { close(c.closed); return c.err }

func TestMeasureErrors(t *testing.T) {
	boom := errors.New("boom")
	okJob := Job{Contestant: "x", Goroutines: 1, N: 10, SampleEvery: 1}
	tests := []struct {
		name string
		c    Contestant
		j    Job
		want string
	}{
		{"constructor error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, boom }}, okJob, "boom"},
		{"nil handler", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, nil }}, okJob, "nil handler"},
		{"nil constructor", Contestant{Name: "x"}, okJob, "no constructor"},
		{"flush error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return noop{}, func() error { return boom }, nil
		}}, okJob, "flush: boom"},
		{"close error", Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return &closeRecorder{closed: make(chan struct{}), err: boom}, nil, nil
		}}, okJob, "close: boom"},
		{"zero N", contestant(t, "noop"), Job{Goroutines: 1, SampleEvery: 1}, "N must be"},
		{"too many goroutines", contestant(t, "noop"), Job{Goroutines: 11, N: 10, SampleEvery: 1}, "goroutines"},
		{"zero SampleEvery", contestant(t, "noop"), Job{Goroutines: 1, N: 10}, "SampleEvery"},
		{"negative idle", contestant(t, "noop"), Job{Goroutines: 1, N: 10, SampleEvery: 1, Idle: -1}, "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.j.TempDir = t.TempDir()
			_, err := Measure(tt.c, tt.j)
			require.ErrorContains(t, err, tt.want)
			left, rerr := os.ReadDir(tt.j.TempDir)
			require.NoError(t, rerr)
			assert.Empty(t, left)
		})
	}
	t.Run("handler closed on flush error", func(t *testing.T) {
		rec := &closeRecorder{closed: make(chan struct{})}
		_, err := Measure(Contestant{Name: "x", New: func(*os.File) (slog.Handler, func() error, error) {
			return rec, func() error { return boom }, nil
		}}, Job{Goroutines: 1, N: 10, SampleEvery: 1, TempDir: t.TempDir()})
		require.ErrorIs(t, err, boom)
		select {
		case <-rec.closed:
		default:
			t.Fatal("handler not closed")
		}
	})
}
