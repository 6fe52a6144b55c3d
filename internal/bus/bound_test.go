package bus

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EnqueueUntil's wait for room ends when done is closed: the record is
// dropped and counted (and marked in the output), and once done is closed
// a record that finds room is still taken, without waiting.
func TestEnqueueUntilDropsWhenDoneCloses(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{Capacity: 4096, WriteThrough: true}, nil)
	first := make(chan error, 1)
	go func() { first <- b.Enqueue(payload(0, 200)) }() // written through, stuck in the sink
	<-s.entered
	done := make(chan struct{})
	// Fill the ring while the sink is stuck.
	n := 1
	for ; b.Stats().QueueDepth+uint64(align8(hdrSize+200)) <= b.capacity; n++ {
		require.NoError(t, b.EnqueueUntil(payload(n, 200), done))
	}
	errc := make(chan error, 1)
	go func() { errc <- b.EnqueueUntil(payload(n, 200), done) }()
	select {
	case err := <-errc:
		t.Fatalf("EnqueueUntil returned (%v) with the ring full and done open", err)
	default:
	}
	close(done)
	require.ErrorIs(t, <-errc, ErrDropped)
	close(s.gate)
	require.NoError(t, <-first)
	require.NoError(t, b.Flush(context.Background()))
	require.NoError(t, b.EnqueueUntil(payload(n+1, 200), done), "room again: taken although done is closed")
	closeBus(t, b)
	st := b.Stats()
	assert.EqualValues(t, 1, st.Dropped)
	assert.EqualValues(t, n+1, st.Written)
	assert.EqualValues(t, 1, st.WriteThrough, "only the first record (a plain Enqueue) was written through")
	requireAccounting(t, st)
}

// EnqueueWrittenCtx waits for the drainer's write of its record (never a
// write-through, which ctx could not interrupt) and returns ctx's error when
// ctx ends first; the record stays queued and is written later.
func TestEnqueueWrittenCtxEndsWithCtx(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{WriteThrough: true}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.EnqueueWrittenCtx(ctx, payload(0, 30)) }()
	<-s.entered // the drainer (not this caller) is writing it, stuck
	select {
	case err := <-errc:
		t.Fatalf("EnqueueWrittenCtx returned (%v) before its write", err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	close(s.gate)
	closeBus(t, b)
	assert.Equal(t, [][]byte{payload(0, 30)}, s.records())
	st := b.Stats()
	assert.Zero(t, st.WriteThrough)
	requireAccounting(t, st)
}
