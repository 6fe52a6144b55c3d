package logrbridge

import (
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

// closingHandler is a JSON handler with a Close method that counts calls.
type closingHandler struct {
	*slog.JSONHandler
	closes atomic.Int32 // Close runs on the cleanup's goroutine
}

func (c *closingHandler) Close() error { c.closes.Add(1); return nil }

func newClosingHandler() (*closingHandler, *syncbuf.Buffer) {
	var buf syncbuf.Buffer
	return &closingHandler{JSONHandler: slog.NewJSONHandler(&buf, nil)}, &buf
}

// gcUntil runs garbage collections until cond holds, failing the test if it
// does not within 10 s. Cleanups run on their own goroutine after the
// collection that found their object unreachable, so cond is polled; the
// loop waits on that condition, not on time.
func gcUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "not within 10 s: %s", what)
		runtime.GC()
		runtime.Gosched()
	}
}

// dropSentinel makes a logger with CloseWhenUnreachable, logs through a
// derived logger and drops them all; it returns the handler, whose Close
// shows that a garbage collection has found loggers dropped before it
// unreachable and their cleanups have run.
//
//go:noinline
func dropSentinel() *closingHandler {
	h, _ := newClosingHandler()
	NewLogger(h, CloseWhenUnreachable(true)).WithName("sentinel").Info("m")
	return h
}

// settle drops a sentinel logger and collects until its handler is closed,
// twice: any cleanup made runnable by the first round has had a whole
// second round to run.
func settle(t *testing.T) {
	t.Helper()
	for range 2 {
		s := dropSentinel()
		gcUntil(t, "dropped sentinel logger closed", func() bool { return s.closes.Load() == 1 })
	}
}

func TestCloseWhenUnreachableClosesOnceEveryLoggerIsDropped(t *testing.T) {
	h, buf := newClosingHandler()
	func() {
		l := NewLogger(h, CloseWhenUnreachable(true))
		l.WithName("a").WithValues("k", 1).V(0).Info("one")
		slog.New(logr.ToSlogHandler(l)).Info("two")
	}()
	gcUntil(t, "handler closed", func() bool { return h.closes.Load() == 1 })
	assert.Len(t, lines(t, buf.String()), 2)
	settle(t)
	assert.EqualValues(t, 1, h.closes.Load(), "closed once")
}

// keep returns what build derives from a fresh CloseWhenUnreachable logger
// on h; the logger itself is dropped on return.
//
//go:noinline
func keep[T any](h slog.Handler, build func(logr.Logger) T) T {
	return build(NewLogger(h, CloseWhenUnreachable(true)))
}

func TestCloseWhenUnreachableKeepsHandlerOfLiveDerivedLoggers(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep func(h slog.Handler) func(msg string)
	}{
		{"WithName", func(h slog.Handler) func(string) {
			l := keep(h, func(l logr.Logger) logr.Logger { return l.WithName("child") })
			return func(msg string) { l.Info(msg) }
		}},
		{"WithValues", func(h slog.Handler) func(string) {
			l := keep(h, func(l logr.Logger) logr.Logger { return l.WithValues("k", 1) })
			return func(msg string) { l.Info(msg) }
		}},
		{"V and WithCallDepth", func(h slog.Handler) func(string) {
			l := keep(h, func(l logr.Logger) logr.Logger { return l.V(0).WithCallDepth(1) })
			return func(msg string) { l.Info(msg) }
		}},
		{"slog logger", func(h slog.Handler) func(string) {
			l := keep(h, func(l logr.Logger) *slog.Logger { return slog.New(logr.ToSlogHandler(l)).With("k", 1) })
			return func(msg string) { l.Info(msg) }
		}},
		{"logger back from slog", func(h slog.Handler) func(string) {
			l := keep(h, func(l logr.Logger) logr.Logger {
				return logr.FromSlogHandler(slog.New(logr.ToSlogHandler(l)).WithGroup("g").Handler())
			})
			return func(msg string) { l.Info(msg) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, buf := newClosingHandler()
			func() {
				log := tc.keep(h)
				settle(t)
				assert.Zero(t, h.closes.Load(), "a derived logger is alive")
				log("still open") // its last use: dropped after
			}()
			assert.Contains(t, buf.String(), "still open")
			gcUntil(t, "handler closed once the derived logger is dropped", func() bool { return h.closes.Load() == 1 })
		})
	}
}

func TestWithoutCloseWhenUnreachableNothingIsClosed(t *testing.T) {
	h, _ := newClosingHandler()
	func() { NewLogger(h).WithName("x").Info("m") }()
	func() { NewLogger(h, CloseWhenUnreachable(false)).Info("m") }()
	settle(t)
	assert.Zero(t, h.closes.Load())
}

func TestCloseWhenUnreachableIgnoresHandlersWithoutClose(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	func() { NewLogger(h, CloseWhenUnreachable(true)).Info("m") }()
	settle(t)
	NewLogger(h).Info("after")
	assert.Len(t, lines(t, buf.String()), 2)
}

// An explicit Close of a CloseWhenUnreachable logger cancels the cleanup:
// once the logger is dropped, the handler is not closed a second time
// (settle waits for two later cleanups to have run).
func TestExplicitCloseIsTheOnlyClose(t *testing.T) {
	h, _ := newClosingHandler()
	func() {
		l := NewLogger(h, CloseWhenUnreachable(true))
		l.Info("m")
		require.NoError(t, Close(l))
	}()
	settle(t)
	assert.EqualValues(t, 1, h.closes.Load())
}
