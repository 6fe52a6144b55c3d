package asyncbus

import (
	"bytes"
	"context"
	"errors"
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
	h := NewHandler(w, &Options{SyncLevel: slog.LevelWarn, Ring: RingOptions{MaxLatency: time.Hour}, OnError: func(error) {}})
	defer h.Close()
	ctx := context.Background()
	rec := func(l slog.Level, msg string) slog.Record { return slog.NewRecord(time.Now(), l, msg, 0) }

	// A record fails (the output is down); no Flush afterwards.
	require.NoError(t, h.Handle(ctx, rec(slog.LevelInfo, "lost")), "an Info record returns nil")
	until(t, "the record failed", func() bool { return h.Stats().Failed == 1 })
	w.mu.Lock()
	w.failing = false // the output recovers
	w.mu.Unlock()

	// A record is written through and held in the output's Write.
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
