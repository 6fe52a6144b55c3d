package bus

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression tests for write-through bugs found in review.

var errNoSpace = errors.New("no space left on device")

// tearingSink is a plain io.Writer whose call number tearAt writes the
// first half of what it is given and fails; from then on every call fails
// until revive (unless survive is set). onTear, if set, runs inside the
// tearing call before it returns.
type tearingSink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	calls   int
	tearAt  int
	survive bool
	dead    bool
	onTear  func()
}

func (s *tearingSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	switch {
	case s.calls == s.tearAt:
		if s.onTear != nil {
			s.onTear()
		}
		n := len(p) / 2
		s.buf.Write(p[:n])
		s.dead = !s.survive
		return n, errNoSpace
	case s.dead:
		return 0, errNoSpace
	}
	return s.buf.Write(p)
}

func (s *tearingSink) revive() {
	s.mu.Lock()
	s.dead = false
	s.mu.Unlock()
}

func (s *tearingSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range splitLines(s.buf.Bytes()) {
		out = append(out, string(l))
	}
	return out
}

// A write-through that the sink takes only half of, whose rest the drainer
// then gives up on: the fragment is ended before the next record, which a
// later write-through would otherwise glue to it.
func TestWriteThroughPartialThenRestFailsEndsLine(t *testing.T) {
	s := &tearingSink{tearAt: 1}
	b := newTestBus(t, s, Config{WriteThrough: true, wtInterval: -1}, fastRetry)
	// Half written through, the rest to the ring (the caller then waits for
	// it quietly; Enqueue still returns nil: the record was accepted).
	require.NoError(t, b.Enqueue([]byte("first record\n")))
	require.ErrorIs(t, b.Flush(context.Background()), errNoSpace, "the rest failed")
	s.revive()
	require.NoError(t, b.Enqueue([]byte("second record\n")))
	closeBus(t, b)
	assert.Equal(t, []string{"first \n", "second record\n"}, s.lines(), "the fragment ends its own line")
	st := b.Stats()
	assert.EqualValues(t, 1, st.Failed)
	assert.EqualValues(t, 1, st.Written)
	requireAccounting(t, st)
}

// The drainer tears a record of its own and owes the newline that ends
// it: a write-through (here a forced one, EnqueueWritten) must not reach
// the output before that newline.
func TestTornRecordNewlineBeforeWriteThrough(t *testing.T) {
	s := &tearingSink{tearAt: 2}
	// One token: record 0 is written through, record 1 takes the ring.
	b := newTestBus(t, s, Config{WriteThrough: true, wtBurst: 1, wtInterval: time.Hour}, fastRetry)
	require.NoError(t, b.Enqueue([]byte("record zero\n")))
	// Record one waits for the drainer (the quiet wait), which tears it.
	require.NoError(t, b.Enqueue([]byte("record one\n")))
	require.ErrorIs(t, b.Flush(context.Background()), errNoSpace, "record one failed half-written")
	s.revive()
	require.NoError(t, b.EnqueueWritten([]byte("record two\n")))
	closeBus(t, b)
	assert.Equal(t, []string{"record zero\n", "recor\n", "record two\n"}, s.lines())
	st := b.Stats()
	assert.EqualValues(t, 1, st.Failed)
	assert.EqualValues(t, 2, st.Written)
	requireAccounting(t, st)
}

// A drop registered at a stale tail at or below a write-through's
// reservation while the sink is taking part of the record: the drainer
// writes the rest before the marker, not the marker inside the line.
func TestWriteThroughRestNotSplitByMarker(t *testing.T) {
	s := &tearingSink{tearAt: 1, survive: true} // the drainer's write of the rest succeeds
	b := newTestBus(t, s, Config{WriteThrough: true, wtInterval: -1}, fastRetry)
	s.onTear = func() { _ = b.drop(0) } // a producer refused at tail 0, after the write-through's gap check
	require.NoError(t, b.Enqueue([]byte("first record\n")))
	closeBus(t, b)
	assert.Equal(t, []string{"first record\n", "asyncbus: dropped 1 records\n"}, s.lines())
	st := b.Stats()
	assert.EqualValues(t, 1, st.Written)
	assert.EqualValues(t, 1, st.Dropped)
	assert.EqualValues(t, 1, st.DropMarkers)
	requireAccounting(t, st)
}

// A Flush waiting behind a write-through stuck in the sink: the drainer
// parks (it used to spin on runtime.Gosched for as long as the sink call
// lasted), and the producer that ends the write-through wakes it.
func TestFlushBehindHungWriteThroughParks(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{WriteThrough: true}, nil)
	enqueued := make(chan error, 1)
	go func() { enqueued <- b.Enqueue([]byte("stuck\n")) }()
	<-w.entered // the producer is in the sink, holding the reservation at 0
	release := sync.OnceFunc(func() { close(w.gate) })
	defer release() // on every path, so that nothing leaks
	guard, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(guard) }()
	waitFor(t, "drainer parked behind the write-through", func() bool { return b.state.Load() == stWaitWT })
	release()
	require.NoError(t, <-enqueued)
	require.NoError(t, <-flushed, "the write-through's producer woke the drainer")
	closeBus(t, b)
	assert.Zero(t, b.d.yields, "the drainer never yielded in a loop waiting for the write-through")
	assert.EqualValues(t, 1, b.Stats().WriteThrough)
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, "stuck\n", w.buf.String())
}

// Close whose deadline expires while a write-through hangs in the sink:
// the drainer stops waiting for it and exits (it used to spin for ever).
func TestCloseGivesUpOnHungWriteThrough(t *testing.T) {
	w := newHungWriter()
	b := newTestBus(t, w, Config{WriteThrough: true}, nil)
	enqueued := make(chan error, 1)
	go func() { enqueued <- b.Enqueue([]byte("stuck\n")) }()
	<-w.entered
	defer func() { // on every path, so that nothing leaks
		close(w.gate)
		require.NoError(t, <-enqueued)
	}()
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Close(expired), context.Canceled)
	guard, cancelGuard := context.WithTimeout(context.Background(), time.Minute)
	defer cancelGuard()
	select {
	case <-b.done:
	case <-guard.Done():
		t.Fatal("the drainer did not exit after Close gave up")
	}
}

// syncGateSink is a plain io.Writer whose Sync waits until gate is closed,
// signalling entered (buffered) when a Sync starts.
type syncGateSink struct {
	streamSink
	gate    chan struct{}
	entered chan struct{}
}

func (s *syncGateSink) Sync() error {
	s.entered <- struct{}{}
	<-s.gate
	return nil
}

// A record that finds the ring empty while the drainer holds the sink
// (here: syncing) takes the ring without spending a write-through token.
func TestWriteThroughTokenKeptWhenSinkBusy(t *testing.T) {
	s := &syncGateSink{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	b := newTestBus(t, s, Config{WriteThrough: true, wtBurst: 1, wtInterval: time.Hour}, nil)
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(context.Background()) }()
	<-s.entered // the drainer syncs, holding the sink, with the ring empty
	require.NoError(t, b.Enqueue(payload(0, 30)))
	assert.Zero(t, b.Stats().WriteThrough, "the sink was busy: record 0 took the ring")
	close(s.gate)
	require.NoError(t, <-flushed)
	require.NoError(t, b.Flush(context.Background())) // record 0 written by the drainer
	require.NoError(t, b.Enqueue(payload(1, 30)))
	assert.EqualValues(t, 1, b.Stats().WriteThrough, "the one token was still there for record 1")
	assert.Equal(t, [][]byte{payload(0, 30), payload(1, 30)}, splitLines(s.bytes()), "record 1 written before Enqueue returned")
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}
