package shutdown

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
	"github.com/asyncbus/asyncbus/sampling"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quiet keeps the expected report of a record logged after Close out of
// the test's output.
var quiet = &asyncbus.Options{OnError: func(error) {}}

// syncLog records, per output, the lines written and when each output was
// synced: Close syncs an output with a Sync method after its last write,
// so the order of the syncs is the order of the closes.
type syncLog struct {
	mu     sync.Mutex
	lines  map[string]int
	synced []string
}

func newSyncLog() *syncLog { return &syncLog{lines: map[string]int{}} }

type namedOutput struct {
	name string
	log  *syncLog
}

func (o namedOutput) Write(p []byte) (int, error) {
	o.log.mu.Lock()
	defer o.log.mu.Unlock()
	for _, c := range p {
		if c == '\n' {
			o.log.lines[o.name]++
		}
	}
	return len(p), nil
}

func (o namedOutput) Sync() error {
	o.log.mu.Lock()
	defer o.log.mu.Unlock()
	o.log.synced = append(o.log.synced, o.name)
	return nil
}

// TestCloseAllReachesWrappedHandlers: handlers held only inside a
// MultiHandler, a sampling.Handler and a logr logger are all closed, the
// most recently opened first, with every record written.
func TestCloseAllReachesWrappedHandlers(t *testing.T) {
	out := newSyncLog()
	console := asyncbus.NewHandler(namedOutput{"console", out}, quiet)
	file := asyncbus.NewHandler(namedOutput{"file", out}, quiet)
	sampled := asyncbus.NewHandler(namedOutput{"sampled", out}, quiet)
	logr := asyncbus.NewHandler(namedOutput{"logr", out}, quiet)

	multi := slog.New(slog.NewMultiHandler(console, file))
	sh, err := sampling.NewHandler(sampled, sampling.Config{First: 1000, Thereafter: 1})
	require.NoError(t, err)
	viaSampler := slog.New(sh)
	viaLogr := logrbridge.NewLogger(logr)
	for i := range 100 {
		multi.Info("multi", "i", i)
		viaSampler.Info("sampled", "i", i)
		viaLogr.Info("logr", "i", i)
	}

	require.NoError(t, CloseAll(context.Background()))
	assert.Equal(t, []string{"logr", "sampled", "file", "console"}, out.synced, "closed newest first")
	assert.Equal(t, map[string]int{"console": 100, "file": 100, "sampled": 100, "logr": 100}, out.lines)
	for _, h := range []*asyncbus.Handler{console, file, sampled, logr} {
		assert.ErrorIs(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "late", 0)), asyncbus.ErrClosed)
	}
	require.NoError(t, CloseAll(context.Background()), "nothing left open")
}

// failingOutput always fails.
type failingOutput struct{}

var errDown = errors.New("output down")

func (failingOutput) Write([]byte) (int, error) { return 0, errDown }

// TestCloseAllSkipsClosedHandlers: a handler closed before is off the
// list: CloseAll does not close it again (its Close error would repeat).
func TestCloseAllSkipsClosedHandlers(t *testing.T) {
	h := asyncbus.NewHandler(failingOutput{}, &asyncbus.Options{OnError: func(error) {}, Retry: asyncbus.RetryOptions{Attempts: 1}})
	slog.New(h).Info("lost")
	require.ErrorIs(t, h.Close(), errDown)
	require.NoError(t, CloseAll(context.Background()))
}

// hungOutput blocks every write until released.
type hungOutput struct{ release chan struct{} }

func (o hungOutput) Write(p []byte) (int, error) {
	<-o.release
	return len(p), nil
}

// TestCloseAllDeadline: a hung output makes CloseAll give up on it at its
// share of ctx's deadline (half: two handlers), with an error saying so,
// and the handler after it is still closed with its record written.
func TestCloseAllDeadline(t *testing.T) {
	out := newSyncLog()
	older := asyncbus.NewHandler(namedOutput{"older", out}, quiet)
	hung := hungOutput{release: make(chan struct{})}
	defer close(hung.release) // the drainer's write returns, and its goroutine ends
	stuck := asyncbus.NewHandler(hung, &asyncbus.Options{OnError: func(error) {}})
	slog.New(stuck).Info("never written")
	slog.New(older).Info("written")

	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := CloseAll(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second, "bounded by ctx, not by Close's own 5 s")
	assert.Contains(t, err.Error(), "not written", "the hung handler's error says what it lost")
	assert.Contains(t, out.synced, "older", "closed after the hung one gave up")
	assert.Equal(t, 1, out.lines["older"])
	assert.ErrorIs(t, older.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "late", 0)), asyncbus.ErrClosed)
}
