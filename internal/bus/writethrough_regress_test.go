package bus

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression tests for write-through bugs found in review.

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
