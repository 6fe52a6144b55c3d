package asyncbus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/go-logfmt/logfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memSink is a goroutine-safe in-memory output that counts Sync calls.
type memSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	syncs int
}

func (s *memSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *memSink) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs++
	return nil
}

func (s *memSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *memSink) Lines() []string {
	out := strings.TrimSuffix(s.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// take returns what was written so far and empties the sink.
func (s *memSink) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.buf.String()
	s.buf.Reset()
	return out
}

func (s *memSink) Syncs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs
}

var fixedTime = time.Date(2026, 11, 30, 12, 34, 56, 789_000_000, time.UTC)

// logSame sends the same calls through l and want.
func logSame(l, want *slog.Logger) {
	for _, lg := range []*slog.Logger{l, want} {
		lg.Info("hello", "a", 1, "b", "two words", slog.Group("g", "x", 1.5, "y", true))
		lg.With("req", 7).WithGroup("h").Warn("with state", "d", time.Second, "e", []byte("bytes"))
		lg.Error("boom", "err", fmt.Errorf("wrapped: %w", io.EOF))
		lg.Debug("not shown")
	}
}

func TestOutputMatchesStandardHandlers(t *testing.T) {
	dropTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	tests := []struct {
		name   string
		format Format
		std    func(io.Writer, *slog.HandlerOptions) slog.Handler
	}{
		{"json", JSON, func(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewJSONHandler(w, o) }},
		{"text", Text, func(w io.Writer, o *slog.HandlerOptions) slog.Handler { return slog.NewTextHandler(w, o) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got memSink
			var want bytes.Buffer
			h := NewHandler(&got, &Options{Format: tt.format, ReplaceAttr: dropTime})
			logSame(slog.New(h), slog.New(tt.std(&want, &slog.HandlerOptions{ReplaceAttr: dropTime})))
			require.NoError(t, h.Close())
			assert.Equal(t, want.String(), got.String())
		})
	}
}

// parseLine turns one line of any format back into the nested map that
// testing/slogtest expects.
func parseLine(t *testing.T, format Format, line string) map[string]any {
	t.Helper()
	if format == JSON {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		return m
	}
	m := map[string]any{}
	if format == Console {
		// "15:04:05.000 LEVEL message k=v ...": the time is present only for
		// a non-zero record time; message words are the tokens before the
		// first key=value.
		if len(line) > 12 && line[2] == ':' && line[5] == ':' && line[8] == '.' {
			m[slog.TimeKey] = line[:12]
			line = line[13:]
		}
		level, rest, _ := strings.Cut(strings.TrimLeft(line, " "), " ")
		m[slog.LevelKey] = level
		line = strings.TrimLeft(rest, " ")
		var msg []string
		for line != "" {
			word, after, _ := strings.Cut(line, " ")
			if strings.Contains(word, "=") {
				break
			}
			msg = append(msg, word)
			line = after
		}
		m[slog.MessageKey] = strings.Join(msg, " ")
	}
	put := func(key string, val any) {
		parts := strings.Split(key, ".")
		cur := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = val
	}
	if format == Console && line == "" {
		return m // no attributes
	}
	dec := logfmt.NewDecoder(strings.NewReader(line))
	require.True(t, dec.ScanRecord(), line)
	for dec.ScanKeyval() {
		put(string(dec.Key()), string(dec.Value()))
	}
	require.NoError(t, dec.Err(), line)
	if format == Logfmt {
		if ts, ok := m["ts"]; ok {
			m[slog.TimeKey] = ts
			delete(m, "ts")
		}
	}
	return m
}

func TestSlogtestConformance(t *testing.T) {
	for _, format := range []Format{JSON, Text, Logfmt, Console} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			var sink *memSink
			var h *Handler
			slogtest.Run(t, func(t *testing.T) slog.Handler {
				sink = &memSink{}
				h = NewHandler(sink, &Options{Format: format, Encoding: EncodingOptions{Color: ColorNever}})
				t.Cleanup(func() { _ = h.Close() })
				return h
			}, func(t *testing.T) map[string]any {
				require.NoError(t, h.Flush())
				lines := sink.Lines()
				require.Len(t, lines, 1)
				return parseLine(t, format, lines[0])
			})
		})
	}
}

// TestFlushAfterCloseReturnsErrClosed: Flush after Close is a
// shutdown-order mistake and never passes for success: it returns an
// error wrapping ErrClosed, and Close's own error when records failed.
// Before the fix it returned nil.
func TestFlushAfterCloseReturnsErrClosed(t *testing.T) {
	tests := []struct {
		name     string
		out      io.Writer
		closeErr error // what Close returns (and Flush wraps); nil: Close succeeds
		flush    func(h *Handler) error
	}{
		{"Flush", &memSink{}, nil, (*Handler).Flush},
		{"FlushContext", &memSink{}, nil, func(h *Handler) error { return h.FlushContext(context.Background()) }},
		{"Flush after a failed Close", nil, errNilWriter, (*Handler).Flush},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandler(tt.out, &Options{OnError: func(error) {}})
			slog.New(h).Info("before")
			closeErr := h.Close()
			if tt.closeErr == nil {
				require.NoError(t, closeErr)
			} else {
				require.ErrorIs(t, closeErr, tt.closeErr)
			}
			err := tt.flush(h)
			require.ErrorIs(t, err, ErrClosed)
			assert.ErrorContains(t, err, "Flush after Close")
			if tt.closeErr != nil {
				assert.ErrorIs(t, err, tt.closeErr, "Close's verdict is kept")
			}
		})
	}
}

func TestConcurrentDerivedHandlers(t *testing.T) {
	const goroutines, perG = 8, 2000
	var sink memSink
	h := NewHandler(&sink, &Options{Ring: RingOptions{Capacity: 64 << 10}})
	shared := slog.New(h).With("shared", true).WithGroup("g")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := shared.With("g", g)
			for i := range perG {
				l.Info("msg", "i", i)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, h.Close())

	next := make([]int, goroutines)
	lines := sink.Lines()
	require.Len(t, lines, goroutines*perG)
	for _, line := range lines {
		var rec struct {
			Shared bool `json:"shared"`
			G      struct {
				G int `json:"g"`
				I int `json:"i"`
			} `json:"g"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		require.True(t, rec.Shared)
		require.Equal(t, next[rec.G.G], rec.G.I, "per-goroutine order")
		next[rec.G.G]++
	}
}

func TestSyncLevelWritesBeforeHandleReturns(t *testing.T) {
	var sink memSink
	h := NewHandler(&sink, &Options{SyncLevel: slog.LevelError, Ring: RingOptions{MaxLatency: time.Hour}})
	defer h.Close()
	l := slog.New(h)

	l.Error("must be on disk", "k", 1)
	lines := sink.Lines()
	require.Len(t, lines, 1, "an Error record is written before Handle returns")
	assert.Contains(t, lines[0], `"msg":"must be on disk"`)
	assert.GreaterOrEqual(t, sink.Syncs(), 1, "and the output was synced")
}

// fixedLeveler is a Leveler of neither type syncLevelNow calls directly.
type fixedLeveler slog.Level

func (l fixedLeveler) Level() slog.Level { return slog.Level(l) }

// TestSyncLevelLevelers checks that every kind of SyncLevel Leveler is
// honoured: a fixed Level, a *slog.LevelVar (also after it changes) and any
// other Leveler. A record at SyncLevel is synced before Handle returns; one
// below it is not.
func TestSyncLevelLevelers(t *testing.T) {
	lv := new(slog.LevelVar)
	lv.Set(slog.LevelWarn)
	tests := []struct {
		name    string
		leveler slog.Leveler
		change  func() // run before logging; nil: none
		synced  slog.Level
		below   slog.Level
	}{
		{"fixed Level", slog.LevelWarn, nil, slog.LevelWarn, slog.LevelInfo},
		{"default LevelFatal", nil, nil, LevelFatal, slog.LevelError},
		{"LevelVar", lv, nil, slog.LevelWarn, slog.LevelInfo},
		{"LevelVar changed", lv, func() { lv.Set(slog.LevelDebug) }, slog.LevelDebug, slog.LevelDebug - 1},
		{"other Leveler", fixedLeveler(slog.LevelInfo), nil, slog.LevelInfo, slog.LevelDebug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sink memSink
			h := NewHandler(&sink, &Options{SyncLevel: tt.leveler, Level: slog.LevelDebug - 4, Ring: RingOptions{MaxLatency: time.Hour}})
			defer h.Close()
			if tt.change != nil {
				tt.change()
			}
			l := slog.New(h)
			l.Log(context.Background(), tt.below, "below")
			require.Zero(t, sink.Syncs(), "a record below SyncLevel is not synced")
			l.Log(context.Background(), tt.synced, "at")
			assert.Equal(t, 1, sink.Syncs(), "a record at SyncLevel is synced before Handle returns")
			lines := sink.Lines()
			require.Len(t, lines, 2, "the sync wrote both records, in order")
			assert.Contains(t, lines[0], `"msg":"below"`)
			assert.Contains(t, lines[1], `"msg":"at"`)
		})
	}
}

func TestNamedWritesLoggerKey(t *testing.T) {
	var sink memSink
	h := NewHandler(&sink, &Options{Encoding: EncodingOptions{LoggerKey: "component"}})
	l := slog.New(h.Named("db").Named("sql").WithAttrs([]slog.Attr{slog.Int("conn", 3)}))
	l.Info("query")
	require.NoError(t, h.Close())
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(sink.String()), &m))
	assert.Equal(t, "db.sql", m["component"])
	assert.EqualValues(t, 3, m["conn"])
	assert.Equal(t, "db.sql", h.Named("db").Named("sql").Name())
}

func TestDynamicLevelVar(t *testing.T) {
	var lv slog.LevelVar
	var sink memSink
	h := NewHandler(&sink, &Options{Level: &lv})
	defer h.Close()
	l := slog.New(h)
	l.Debug("hidden")
	lv.Set(slog.LevelDebug)
	l.Debug("shown")
	require.NoError(t, h.Flush())
	lines := sink.Lines()
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "shown")
}

// countingWriter counts write calls, to show the drainer batches.
type countingWriter struct {
	calls atomic.Int64
	lines atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.calls.Add(1)
	c.lines.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// TestWritesAreBatched: a busy logger's records are written in batches
// (the quiet wait's rate limit keeps its records from being written one
// call each).
func TestWritesAreBatched(t *testing.T) {
	var w countingWriter
	h := NewHandler(&w, nil)
	l := slog.New(h)
	const n = 20000
	for i := range n {
		l.Info("request handled", "seq", i)
	}
	require.NoError(t, h.Close())
	assert.EqualValues(t, n, w.lines.Load())
	assert.Less(t, w.calls.Load(), int64(n/4), "far fewer writes than records")
}

// TestReleaseDropsCallerValues: a pooled buffer keeps no reference to the
// values a context hook added, so a large value is not pinned by the pool.
func TestReleaseDropsCallerValues(t *testing.T) {
	// release clears only the slots the hook filled: 1, all of arr, and
	// more than arr holds (append moved them to the heap).
	for _, n := range []int{0, 1, 8, 9} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := &buffer{}
			b.fields.reset(false)
			for range n {
				b.fields.AddAttr(slog.Any("k", &struct{ payload [1 << 10]byte }{}))
			}
			b.extra = append(b.extra, slog.Any("e", &struct{}{}))
			b.release()
			for _, a := range b.fields.arr {
				assert.Nil(t, a.Value.Any())
			}
			assert.Nil(t, b.fields.attrs)
			assert.Empty(t, b.extra)
			assert.Nil(t, b.extra[:cap(b.extra)][0].Value.Any())
		})
	}
}
