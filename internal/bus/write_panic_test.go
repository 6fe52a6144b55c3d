package bus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panickySink panics in the calls that panicWrite (or panicSync) picks,
// counted from 1, and otherwise keeps what it is given, as a plain writer
// or (batch) a BatchWriter.
type panickySink struct {
	streamSink
	writes, syncs atomic.Int32
	panicWrite    func(call int32) bool
	panicSync     bool
}

func (s *panickySink) Write(p []byte) (int, error) {
	if c := s.writes.Add(1); s.panicWrite(c) {
		panic(fmt.Sprintf("write %d: boom", c))
	}
	return s.streamSink.Write(p)
}

func (s *panickySink) Sync() error {
	s.syncs.Add(1)
	if s.panicSync {
		panic("sync: boom")
	}
	return nil
}

type panickyBatchSink struct{ *panickySink }

func (s panickyBatchSink) WriteBatch(recs [][]byte) (int, error) {
	if c := s.writes.Add(1); s.panicWrite(c) {
		panic(fmt.Sprintf("write %d: boom", c))
	}
	for _, r := range recs {
		_, _ = s.streamSink.Write(r)
	}
	return len(recs), nil
}

// A sink whose write panics once, with records that wait quietly for
// their write or not: the panic is an error like any other, the record is
// written by the retry, exactly once, and the bus keeps working (before,
// a panic on the drainer killed the process).
func TestSinkPanicIsAWriteError(t *testing.T) {
	for _, quiet := range []bool{true, false} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("quiet=%v/batch=%v", quiet, batch), func(t *testing.T) {
				ps := &panickySink{panicWrite: func(c int32) bool { return c == 1 }}
				var w interface{ Write([]byte) (int, error) } = ps
				if batch {
					w = panickyBatchSink{ps}
				}
				var mu sync.Mutex
				var reported []error
				b := newTestBus(t, w, Config{QuietWait: quiet, OnError: func(err error) {
					mu.Lock()
					reported = append(reported, err)
					mu.Unlock()
				}}, fastRetry)
				require.NoError(t, b.Enqueue([]byte("first\n")))
				require.NoError(t, b.Enqueue([]byte("second\n")))
				require.NoError(t, b.Flush(context.Background()))
				closeBus(t, b)
				assert.Equal(t, "first\nsecond\n", string(ps.bytes()), "each record exactly once, in order")
				mu.Lock()
				require.Len(t, reported, 1, "the panic is reported once: %v", reported)
				assert.ErrorContains(t, reported[0], "the output's write panicked: write 1: boom")
				mu.Unlock()
				st := b.Stats()
				assert.EqualValues(t, 2, st.Written)
				assert.Zero(t, st.Failed)
				requireAccounting(t, st)
			})
		}
	}
}

// A sink that always panics: its records count as failed after the retry
// budget, Flush reports the panic, and Close returns, reporting the failed
// record again: its error is the whole run's.
func TestSinkAlwaysPanics(t *testing.T) {
	ps := &panickySink{panicWrite: func(int32) bool { return true }}
	b := newTestBus(t, ps, Config{QuietWait: true, MaxLatency: time.Millisecond}, fastRetry)
	require.NoError(t, b.Enqueue([]byte("lost\n")), "accepted; its failure is Flush's to report")
	err := b.Flush(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, "the output's write panicked: write")
	err = b.Close(context.Background())
	assert.ErrorContains(t, err, "the output's write panicked: write")
	assert.ErrorContains(t, err, "(1 record failed)")
	st := b.Stats()
	assert.EqualValues(t, 1, st.Failed)
	assert.Empty(t, ps.bytes())
	requireAccounting(t, st)
}

// A Sync that panics is a sync error for Flush.
func TestSinkSyncPanics(t *testing.T) {
	ps := &panickySink{panicWrite: func(int32) bool { return false }, panicSync: true}
	b := newTestBus(t, ps, Config{}, fastRetry)
	require.NoError(t, b.Enqueue([]byte("kept\n")))
	err := b.Flush(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, "the output's sync panicked: sync: boom")
	_ = b.Close(context.Background()) // its final sync panics too: reported, not fatal
	assert.Equal(t, "kept\n", string(ps.bytes()))
	assert.EqualValues(t, 1, b.Stats().Written)
}
