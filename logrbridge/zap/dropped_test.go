package zap

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// gcUntil runs garbage collections until cond holds, failing the test if it
// does not within 10 s. A dropped logger's handler is closed on a goroutine
// started by a cleanup, after the collection that found the logger
// unreachable: cond is polled, the loop waits on it, not on time.
func gcUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "not within 10 s: %s", what)
		runtime.GC()
		runtime.Gosched()
	}
}

// closed reports whether h, an asyncbus handler, is closed: Handle then
// returns asyncbus.ErrClosed (before, the probe goes to h's output).
func closed(h slog.Handler) bool {
	return h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "probe", 0)) == asyncbus.ErrClosed
}

// droppedNew makes a logger with New, logs and drops it, and returns its
// handler, which does not keep it open.
//
//go:noinline
func droppedNew() slog.Handler {
	l := New(WriteTo(io.Discard))
	l.WithName("sentinel").Info("m")
	h, _ := logrbridge.Handler(l)
	return h
}

// settle drops a New logger and collects until its handler is closed,
// twice: a cleanup made runnable by the first round has had a whole second
// round to run.
func settle(t *testing.T) {
	t.Helper()
	for range 2 {
		h := droppedNew()
		gcUntil(t, "dropped sentinel logger closed", func() bool { return closed(h) })
	}
}

func TestNewClosesHandlerOnceLoggersAreDropped(t *testing.T) {
	defer goleak.VerifyNone(t)
	base := runtime.NumGoroutine()
	var buf syncbuf.Buffer
	const n = 2000 // past the quiet wait's burst: most lines are still queued when the logger is dropped
	func() {
		l := New(WriteTo(&buf)).WithName("test")
		for i := range n {
			l.Info("line", "i", i)
		}
	}()
	gcUntil(t, "drainer and closing goroutine gone", func() bool { return runtime.NumGoroutine() <= base })
	ls := jsonLines(t, buf.String())
	require.Len(t, ls, n, "closing writes what was queued")
	for i, m := range ls {
		require.EqualValues(t, i, m["i"])
	}
}

// newChild returns a logger derived from a New logger that is dropped on
// return.
//
//go:noinline
func newChild(w io.Writer, build func(logr.Logger) logr.Logger) logr.Logger {
	return build(New(WriteTo(w)))
}

func TestNewKeepsHandlerOfLiveDerivedLogger(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name  string
		build func(logr.Logger) logr.Logger
	}{
		{"WithName", func(l logr.Logger) logr.Logger { return l.WithName("child") }},
		{"WithValues", func(l logr.Logger) logr.Logger { return l.WithValues("k", 1) }},
		{"through slog", func(l logr.Logger) logr.Logger {
			return logr.FromSlogHandler(slog.New(logr.ToSlogHandler(l)).With("k", 1).Handler())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			var h slog.Handler
			func() {
				child := newChild(&buf, tc.build)
				h, _ = logrbridge.Handler(child)
				settle(t)
				assert.False(t, closed(h), "the derived logger is alive")
				child.Info("still open")
				require.NoError(t, logrbridge.Flush(child)) // child's last use
			}()
			assert.Contains(t, buf.String(), `"msg":"still open"`)
			gcUntil(t, "closed once the derived logger is dropped too", func() bool { return closed(h) })
		})
	}
}

func TestNewWithHandlerLeavesClosingToTheCaller(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	var h *asyncbus.Handler
	func() {
		var l logr.Logger
		l, h = NewWithHandler(WriteTo(&buf))
		l.Info("one")
	}()
	settle(t)
	require.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "two", 0)))
	require.NoError(t, h.Close())
	assert.Len(t, jsonLines(t, buf.String()), 2)
}
