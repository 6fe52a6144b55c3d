package asyncbus

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var errOutput = errors.New("output broken")

// brokenOutput is an io.Writer that fails while broken is set.
type brokenOutput struct {
	broken atomic.Bool
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (w *brokenOutput) Write(p []byte) (int, error) {
	if w.broken.Load() {
		return 0, errOutput
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *brokenOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestOnErrorMayUseTheHandler: an OnError that logs
// through the same handler (into a full Block ring, or at SyncLevel, which
// waits for the write), calls Flush, or calls Close does not deadlock; the
// reports are delivered, and no goroutine is left after Close.
func TestOnErrorMayUseTheHandler(t *testing.T) {
	cases := []struct {
		name string
		use  func(h *Handler)
	}{
		{"log into a full ring", func(h *Handler) {
			l := slog.New(h)
			for i := range 100 { // about 100 bytes each: far more than the 1 KiB ring
				l.Error("OnError logs", "i", i, "pad", strings.Repeat("x", 40))
			}
		}},
		{"log at SyncLevel", func(h *Handler) { slog.New(h).Log(context.Background(), LevelFatal, "OnError logs") }},
		{"flush", func(h *Handler) { _ = h.Flush() }},
		{"close", func(h *Handler) { _ = h.Close() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			out := &brokenOutput{}
			out.broken.Store(true)
			var h atomic.Pointer[Handler]
			var mu sync.Mutex
			var reports []error
			ready := make(chan struct{})
			hh := NewHandler(out, &Options{Ring: RingOptions{Capacity: 4096}, OnError: func(err error) {
				mu.Lock()
				reports = append(reports, err)
				mu.Unlock()
				<-ready
				tc.use(h.Load())
			}})
			h.Store(hh)
			close(ready)
			guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			closed := make(chan error, 1)
			go func() {
				l := slog.New(hh)
				for i := range 20 {
					l.Info("record", "i", i)
				}
				closed <- hh.CloseContext(guard)
			}()
			var err error
			select {
			case err = <-closed:
			case <-guard.Done():
				t.Fatalf("deadlock: logging and Close did not return: %+v", hh.Stats())
			}
			require.NotErrorIs(t, err, context.DeadlineExceeded, "Close deadlocked")
			require.ErrorIs(t, err, errOutput)
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, reports, "the reports are delivered")
			assert.ErrorIs(t, reports[0], errOutput)
			st := hh.Stats()
			assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed, "%+v", st)
		})
	}
}

// TestCapacityOutOfRangeIsRefused: a ring
// larger than 1 GiB is a configuration mistake, not an allocation, and one
// below 4 KiB would send every ordinary record down the oversize path:
// Open returns an error, and NewHandler reports it and runs with the
// default ring. Before the fix, 1<<40 killed the process with the
// runtime's out-of-memory error, and 3 silently became a 64-byte ring.
func TestCapacityOutOfRangeIsRefused(t *testing.T) {
	for _, c64 := range []int64{1 << 40, 1<<30 + 1, 1 << 31, 3, 1, minCapacity - 1} {
		c := int(min(c64, math.MaxInt)) // on 32-bit targets the largest int, still over 1 GiB
		h, err := Open(&bytes.Buffer{}, &Options{Ring: RingOptions{Capacity: c}})
		require.Nil(t, h)
		require.ErrorContains(t, err, "Options.Ring.Capacity")

		var reported []error
		var out bytes.Buffer
		h = NewHandler(&out, &Options{Ring: RingOptions{Capacity: c}, OnError: func(err error) { reported = append(reported, err) }})
		assert.EqualValues(t, defaultCapacity, h.Stats().Capacity)
		slog.New(h).Info("still logged")
		require.NoError(t, h.Close())
		require.Len(t, reported, 1)
		assert.ErrorContains(t, reported[0], "Options.Ring.Capacity")
		assert.Contains(t, out.String(), `"msg":"still logged"`)
	}
	assert.EqualValues(t, 1<<30, maxCapacity)
}

// TestNilWriterFailsEveryRecord: NewHandler(nil, ...)
// does not crash the program, and does not pass for success either: it is
// reported, every record is counted as Failed (never Written), and Flush and
// Close return the error. Open refuses it.
func TestNilWriterFailsEveryRecord(t *testing.T) {
	defer goleak.VerifyNone(t)
	_, err := Open(nil, nil)
	require.EqualError(t, err, "asyncbus: the output is nil; Open refused it")

	var mu sync.Mutex
	var reported []string
	h := NewHandler(nil, &Options{OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}})
	l := slog.New(h)
	for i := range 10 {
		l.Info("lost", "i", i)
	}
	require.ErrorContains(t, h.Flush(), "nil writer")
	for i := range 5 {
		l.Info("lost too", "i", i)
	}
	err = h.Close()
	require.ErrorIs(t, err, errNilWriter)
	st := h.Stats()
	assert.Zero(t, st.Written)
	assert.Zero(t, st.WrittenBytes)
	assert.EqualValues(t, 15, st.Failed)
	assert.EqualValues(t, 15, st.Enqueued)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(reported), 2, "%q", reported)
	assert.Equal(t, "asyncbus: the output is nil; every record fails (counted in Stats.Failed)", reported[0])
	assert.Equal(t, "asyncbus: write (nil writer): asyncbus: nil writer", reported[1])
}

// panicOnceOutput panics in its first Write, then keeps what it is given.
type panicOnceOutput struct {
	calls atomic.Int32
	brokenOutput
}

func (w *panicOnceOutput) Write(p []byte) (int, error) {
	if w.calls.Add(1) == 1 {
		panic("output boom")
	}
	return w.brokenOutput.Write(p)
}

// An output whose Write panics once (on the drainer, the only goroutine
// that calls it), with and without a BlockTimeout: the caller does not see
// the panic, the handler keeps working, the record is written by the retry
// exactly once and the panic is reported to OnError. Before, a panic on
// the drainer killed the process.
func TestPanickingOutput(t *testing.T) {
	for _, opts := range []struct {
		name string
		o    Options
	}{
		{"default", Options{}},
		{"block timeout", Options{Ring: RingOptions{BlockTimeout: time.Hour}}},
	} {
		t.Run(opts.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			w := &panicOnceOutput{}
			var mu sync.Mutex
			var reported []string
			o := opts.o
			o.OnError = func(err error) {
				mu.Lock()
				reported = append(reported, err.Error())
				mu.Unlock()
			}
			h := NewHandler(w, &o)
			l := slog.New(h)
			require.NotPanics(t, func() { l.Info("first") })
			l.Info("second")
			require.NoError(t, h.Flush())
			require.NoError(t, h.Close())
			lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
			require.Len(t, lines, 2, "%s", w.String())
			assert.Contains(t, lines[0], `"msg":"first"`)
			assert.Contains(t, lines[1], `"msg":"second"`)
			st := h.Stats()
			assert.EqualValues(t, 2, st.Written)
			assert.Zero(t, st.Failed)
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, reported)
			assert.Contains(t, reported[0], "the output's write panicked: output boom")
		})
	}
}

// pathPanicOutput is an output with a Path method (as filesink.File has)
// that panics once armed.
type pathPanicOutput struct {
	brokenOutput
	armed atomic.Bool
}

func (w *pathPanicOutput) Path() string {
	if w.armed.Load() {
		panic("Path boom")
	}
	return "/nonexistent/x.log"
}

// With RingFile the drainer asks the output for its path before each
// batch (a recovery hint): a Path that panics is no position, not a crash.
func TestOutputPathPanicsOnDrainer(t *testing.T) {
	w := &pathPanicOutput{}
	h, err := Open(w, &Options{Ring: RingOptions{File: t.TempDir() + "/ring"}})
	require.NoError(t, err)
	w.armed.Store(true)
	require.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "x", 0)))
	require.NoError(t, h.Flush())
	require.NoError(t, h.Close())
	assert.Contains(t, w.String(), `"msg":"x"`)
}

// A typed nil writer (the *os.File of an ignored os.OpenFile error) is
// the nil writer: reported, every record failed, nothing crashes.
func TestTypedNilWriterIsTheNilWriter(t *testing.T) {
	var f *os.File
	var reports []error
	h := NewHandler(f, &Options{OnError: func(err error) { reports = append(reports, err) }})
	l := slog.New(h)
	l.Info("lost")
	l.Error("lost too")
	err := h.Close()
	require.Error(t, err)
	st := h.Stats()
	assert.EqualValues(t, 2, st.Failed)
	assert.Zero(t, st.Written)
	require.NotEmpty(t, reports)
	assert.Equal(t, "asyncbus: the output is a nil *os.File; every record fails (counted in Stats.Failed)", reports[0].Error())
	_, err = Open(f, nil)
	assert.EqualError(t, err, "asyncbus: the output is a nil *os.File; Open refused it")
	assert.False(t, errors.Is(err, ErrClosed))
}
