package asyncbus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedFailingOutput fails every write while failing is set, holds a write
// of a record containing "hold" until gate is closed, and counts the Syncs
// made after a record containing "sync-me" was written.
type gatedFailingOutput struct {
	mu         sync.Mutex
	failing    bool
	buf        bytes.Buffer
	gate       chan struct{}
	entered    chan struct{}
	syncMeOut  bool
	syncsAfter int
}

func (w *gatedFailingOutput) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("hold")) {
		w.entered <- struct{}{}
		<-w.gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failing {
		return 0, errors.New("disk on fire")
	}
	if bytes.Contains(p, []byte("sync-me")) {
		w.syncMeOut = true
	}
	return w.buf.Write(p)
}

func (w *gatedFailingOutput) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.syncMeOut {
		w.syncsAfter++
	}
	return nil
}

// until polls cond, yielding, until it holds (no sleeps, no timing).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		require.Less(t, i, 50_000_000, "condition never held: %s", what)
		runtime.Gosched()
	}
}

// The quiet wait (a record behind a short queue waits for its write) does
// not change what Handle returns: an Info record returns nil although an
// earlier record failed and no Flush has answered since, and a SyncLevel
// record that waited quietly is still synced before Handle returns. (A
// first version returned the drainer's answer: the earlier failure, before
// the sync.)
func TestQuietWaitKeepsHandleResult(t *testing.T) {
	w := &gatedFailingOutput{failing: true, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	h := NewHandler(w, &Options{SyncLevel: slog.LevelWarn, Ring: RingOptions{MaxLatency: 10 * time.Millisecond}, OnError: func(error) {}})
	defer h.Close()
	ctx := context.Background()
	rec := func(l slog.Level, msg string) slog.Record { return slog.NewRecord(time.Now(), l, msg, 0) }

	// A record fails (the output is down); no Flush afterwards.
	require.NoError(t, h.Handle(ctx, rec(slog.LevelInfo, "lost")), "an Info record returns nil")
	until(t, "the record failed", func() bool { return h.Stats().Failed == 1 })
	w.mu.Lock()
	w.failing = false // the output recovers
	w.mu.Unlock()
	// A write gets through (the probe): the output no longer counts as
	// failing, so the waits below are made. Still no Flush.
	require.NoError(t, h.Handle(ctx, rec(slog.LevelInfo, "recovered")))
	until(t, "a write got through", func() bool { return h.Stats().Written == 1 })

	// A record is held in the output's Write.
	held := make(chan error, 1)
	go func() { held <- h.Handle(ctx, rec(slog.LevelInfo, "hold")) }()
	<-w.entered
	depth := h.Stats().QueueDepth

	// A Warn (SyncLevel) record and an Info record find it ahead: quiet waits.
	synced, info := make(chan error, 1), make(chan error, 1)
	go func() { synced <- h.Handle(ctx, rec(slog.LevelWarn, "sync-me")) }()
	until(t, "the Warn record is reserved", func() bool { return h.Stats().QueueDepth > depth })
	go func() { info <- h.Handle(ctx, rec(slog.LevelInfo, "after")) }()
	close(w.gate)
	require.NoError(t, <-held)
	require.NoError(t, <-info, "an Info record written fine returns nil, whatever failed before")
	errSync := <-synced
	w.mu.Lock()
	syncs, out := w.syncsAfter, w.syncMeOut
	w.mu.Unlock()
	assert.True(t, out)
	assert.Positive(t, syncs, "a SyncLevel record is synced before Handle returns")
	// Sync reports the failure since the last Flush, as SyncLevel always did.
	assert.ErrorContains(t, errSync, "disk on fire")
}

// Log calls wait for an output (the quiet wait, the Error wait) unless it
// retries over the network (a Closer, such as otlpsink's sink).
func TestCallersWaitExceptForRemoteOutputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  io.Writer
		want bool
	}{
		{"file-like", &bytes.Buffer{}, true},
		{"closer", remoteOutput{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, callersWait(tc.out))
			h := NewHandler(tc.out, nil)
			defer h.Close()
			assert.Equal(t, tc.want, h.tree.errsKept, "Error records wait")
		})
	}
}

// remoteOutput is an output that retries over the network (a Closer).
type remoteOutput struct{}

func (remoteOutput) Write(p []byte) (int, error)       { return len(p), nil }
func (remoteOutput) Closing(context.Context) time.Time { return time.Now() }
