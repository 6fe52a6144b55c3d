package asyncbustest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/asyncbustest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// fakeTB stands in for a test: it keeps what is written to its log, runs
// its cleanups when finish is called, and afterwards panics on any write,
// as the testing package does.
type fakeTB struct {
	testing.TB // the real test, for everything not overridden
	mu         sync.Mutex
	writes     []string // one entry per Output write or Log call
	cleanups   []func()
	ended      bool
	fatal      string
}

type errFatal struct{}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		panic("Log in goroutine after " + f.Name() + " has completed: " + s)
	}
	f.writes = append(f.writes, s)
}

type fakeOutput struct{ f *fakeTB }

func (o fakeOutput) Write(p []byte) (int, error) { o.f.record(string(p)); return len(p), nil }

func (f *fakeTB) Output() io.Writer { return fakeOutput{f} }
func (f *fakeTB) Log(args ...any)   { f.record("LOG " + fmt.Sprintln(args...)) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	panic(errFatal{})
}

// finish runs the cleanups (last first) and ends the test.
func (f *fakeTB) finish() {
	f.mu.Lock()
	cs := f.cleanups
	f.cleanups = nil
	f.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
}

func (f *fakeTB) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.writes...)
}

func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// line returns the line number of its caller plus delta.
func line(delta int) int {
	_, _, l, _ := runtime.Caller(1)
	return l + delta
}

func TestWritesSynchronouslyWithCallerLine(t *testing.T) {
	f := &fakeTB{TB: t}
	log := asyncbustest.New(f, &asyncbus.Options{ReplaceAttr: noTime})
	l1 := line(1)
	log.Info("hello", "k", 1)
	// Written before Info returned, attributed to the logging call.
	assert.Equal(t, []string{fmt.Sprintf("handler_test.go:%d: {\"level\":\"INFO\",\"msg\":\"hello\",\"k\":1}\n", l1)}, f.lines())
	l2 := line(1)
	log.With("w", true).WithGroup("g").Warn("second", "k", 2)
	assert.Equal(t, fmt.Sprintf("handler_test.go:%d: {\"level\":\"WARN\",\"msg\":\"second\",\"w\":true,\"g\":{\"k\":2}}\n", l2), f.lines()[1])
	log.Debug("below Info: not written")
	assert.Len(t, f.lines(), 2)
	f.finish()
}

func TestDefaultOptionsAndNamed(t *testing.T) {
	f := &fakeTB{TB: t}
	h := asyncbustest.NewHandler(f, nil)
	slog.New(h.Named("db")).Debug("connected", "pool", 4)
	lines := f.lines()
	require.Len(t, lines, 1)
	for _, want := range []string{"handler_test.go:", "DEBUG", "connected", "db", "pool=4"} {
		assert.Contains(t, lines[0], want)
	}
	f.finish()
}

// TestRecordWithoutPC: a record without a caller (HandleAttrs-style
// bridges, hand-made records) goes through t.Log.
func TestRecordWithoutPC(t *testing.T) {
	f := &fakeTB{TB: t}
	h := asyncbustest.NewHandler(f, &asyncbus.Options{ReplaceAttr: noTime})
	require.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "no pc", 0)))
	assert.Equal(t, []string{"LOG {\"level\":\"INFO\",\"msg\":\"no pc\"}\n"}, f.lines())
	f.finish()
}

// TestOneWritePerLine: whatever the format makes of a multi-line message,
// every write to the test log is one complete line.
func TestOneWritePerLine(t *testing.T) {
	for _, format := range []asyncbus.Format{asyncbus.JSON, asyncbus.Text, asyncbus.Logfmt, asyncbus.Console} {
		f := &fakeTB{TB: t}
		log := asyncbustest.New(f, &asyncbus.Options{Format: format})
		log.Info("first line\nsecond line", "v", "a\nb")
		log.Info("next")
		lines := f.lines()
		require.GreaterOrEqual(t, len(lines), 2)
		for _, l := range lines {
			assert.True(t, strings.HasSuffix(l, "\n"), "%q", l)
			assert.NotContains(t, strings.TrimSuffix(l, "\n"), "\n")
		}
		f.finish()
	}
}

func TestClosedInCleanupAndIgnoredAfter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the drainer is gone after the cleanup
	f := &fakeTB{TB: t}
	h := asyncbustest.NewHandler(f, nil)
	log := slog.New(h)
	log.Info("during")
	f.finish()
	assert.NotPanics(t, func() {
		log.Info("after")
		log.With("a", 1).Error("after too")
	})
	assert.Equal(t, uint64(2), h.Ignored())
	assert.Len(t, f.lines(), 1)
}

// TestRaceWithEndOfTest: goroutines log while the test ends; none panics,
// and every record is either written once or counted as ignored.
func TestRaceWithEndOfTest(t *testing.T) {
	for range 20 {
		f := &fakeTB{TB: t}
		h := asyncbustest.NewHandler(f, &asyncbus.Options{Format: asyncbus.Logfmt})
		log := slog.New(h)
		var logged atomic.Uint64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 4 {
			wg.Go(func() {
				<-start
				for i := range 50 {
					log.Info("tick", "g", g, "i", i)
					logged.Add(1)
				}
			})
		}
		close(start)
		f.finish()
		wg.Wait()
		assert.Equal(t, logged.Load(), uint64(len(f.lines()))+h.Ignored())
	}
}

// TestGoroutineOutlivesRealTest: with a real *testing.T, a goroutine that
// keeps logging after its test returned does not panic; its later records
// are ignored and counted.
func TestGoroutineOutlivesRealTest(t *testing.T) {
	var h *asyncbustest.Handler
	after := make(chan struct{})
	done := make(chan struct{})
	var afterEnd atomic.Uint64
	t.Run("inner", func(t *testing.T) {
		h = asyncbustest.NewHandler(t, nil)
		log := slog.New(h)
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-after:
					// The inner test has returned and its cleanup has run.
					for range 100 {
						log.Info("after the test", "i", i)
						afterEnd.Add(1)
					}
					return
				default:
					log.Info("racing the end of the test", "i", i)
				}
			}
		}()
		log.Info("inner test returns")
	})
	close(after)
	<-done
	assert.Equal(t, uint64(100), afterEnd.Load())
	assert.GreaterOrEqual(t, h.Ignored(), uint64(100))
}

// TestRecordLargerThanRing: a record larger than the ring (asyncbus's
// oversize path) is still written whole before Handle returns.
func TestRecordLargerThanRing(t *testing.T) {
	f := &fakeTB{TB: t}
	h := asyncbustest.NewHandler(f, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4096}, ReplaceAttr: noTime})
	msg := strings.Repeat("x", 8192)
	require.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, msg, 0)))
	assert.Equal(t, []string{"LOG {\"level\":\"INFO\",\"msg\":\"" + msg + "\"}\n"}, f.lines())
	f.finish()
}
