package asyncbustest_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/asyncbus/asyncbus/asyncbustest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecorderSlogtest: the Recorder passes slog's handler conformance
// tests, with its records turned into maps.
func TestRecorderSlogtest(t *testing.T) {
	var rec *asyncbustest.Recorder
	slogtest.Run(t, func(*testing.T) slog.Handler {
		rec = asyncbustest.NewRecorder()
		return rec
	}, func(t *testing.T) map[string]any {
		rs := rec.Records()
		require.Len(t, rs, 1)
		r := rs[0]
		m := r.Map()
		if !r.Time.IsZero() {
			m[slog.TimeKey] = r.Time
		}
		m[slog.LevelKey] = r.Level
		m[slog.MessageKey] = r.Message
		return m
	})
}

type secret string

func (s secret) LogValue() slog.Value { return slog.StringValue("***") }

type user struct{ id int }

func (u user) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("id", u.id), slog.Any("token", secret("t")))
}

func TestRecorderState(t *testing.T) {
	rec := asyncbustest.NewRecorder()
	log := slog.New(rec)
	log.Info("plain", "k", 1)
	req := log.With("svc", "api").WithGroup("req").With("id", 7)
	req.Warn("slow", "ms", 1500, slog.Group("db", "rows", 3))
	req.WithGroup("empty").Info("no attrs: the empty group is dropped")
	log.Info("valuers", "u", user{5}, "s", secret("x"), slog.Group("", "inlined", true), slog.Attr{})

	rs := rec.Records()
	require.Len(t, rs, 4)
	assert.Equal(t, map[string]any{"k": int64(1)}, rs[0].Map())
	assert.Equal(t, map[string]any{
		"svc": "api",
		"req": map[string]any{"id": int64(7), "ms": int64(1500), "db": map[string]any{"rows": int64(3)}},
	}, rs[1].Map())
	assert.Equal(t, map[string]any{"svc": "api", "req": map[string]any{"id": int64(7)}}, rs[2].Map())
	assert.Equal(t, map[string]any{
		"u": map[string]any{"id": int64(5), "token": "***"}, "s": "***", "inlined": true,
	}, rs[3].Map())

	v, ok := rs[1].Value("req", "db", "rows")
	require.True(t, ok)
	assert.Equal(t, int64(3), v.Int64())
	_, ok = rs[1].Value("req", "ms", "x")
	assert.False(t, ok, "ms is not a group")
	_, ok = rs[1].Value("nope")
	assert.False(t, ok)
	assert.Equal(t, slog.LevelWarn, rs[1].Level)
	assert.Equal(t, "slow", rs[1].Message)
	assert.NotZero(t, rs[1].PC)
	assert.Equal(t, `WARN "slow" svc=api req=[id=7 ms=1500 db=[rows=3]]`, rs[1].String())
}

func TestRecorderMatchAndRequire(t *testing.T) {
	rec := asyncbustest.NewRecorder()
	log := slog.New(rec)
	log.Info("request", "status", 200, "took", 2*time.Millisecond, slog.Group("req", "path", "/a"))
	log.Info("request", "status", 500, slog.Group("req", "path", "/b"))
	log.Debug("request", "status", 200)

	assert.Len(t, rec.Match(slog.LevelInfo, "request"), 2)
	assert.Len(t, rec.Match(slog.LevelInfo, "request", "status", 200), 1)
	assert.Len(t, rec.Match(slog.LevelInfo, "request", "status", 200, "took", 2*time.Millisecond, "req.path", "/a"), 1)
	assert.Empty(t, rec.Match(slog.LevelInfo, "request", "req.path", "/c"))
	assert.Empty(t, rec.Match(slog.LevelInfo, "request", "status"), "odd kv never matches")
	assert.Empty(t, rec.Match(slog.LevelInfo, "request", 1, 2), "non-string key never matches")

	r := rec.Require(t, slog.LevelInfo, "request", "req.path", "/b")
	assert.Equal(t, int64(500), r.Map()["status"])
	rec.RequireNone(t, slog.LevelError, "request")

	// Failures stop the test with a description of what was recorded.
	f := &fakeTB{TB: t}
	assert.PanicsWithValue(t, errFatal{}, func() { rec.Require(f, slog.LevelInfo, "request", "status", 404) })
	assert.Contains(t, f.fatal, `no INFO record "request" with [status 404]`)
	assert.Contains(t, f.fatal, "status = 200, want 404")
	assert.Contains(t, f.fatal, `DEBUG "request" status=200`)
	assert.PanicsWithValue(t, errFatal{}, func() { rec.RequireNone(f, slog.LevelDebug, "request") })
	assert.Contains(t, f.fatal, `unexpected DEBUG record "request"`)

	assert.Equal(t, 3, rec.Len())
	rec.Reset()
	assert.Zero(t, rec.Len())
}

func TestRecorderConcurrent(t *testing.T) {
	rec := asyncbustest.NewRecorder()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			log := slog.New(rec).With("g", g)
			for i := range 100 {
				log.InfoContext(context.Background(), "m", "i", i)
			}
		})
	}
	wg.Wait()
	rs := rec.Records()
	require.Len(t, rs, 800)
	next := map[int64]int64{}
	for _, r := range rs {
		g, _ := r.Value("g")
		i, _ := r.Value("i")
		require.Equal(t, next[g.Int64()], i.Int64(), "per-goroutine order")
		next[g.Int64()]++
	}
}
