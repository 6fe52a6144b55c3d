package bus

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Several goroutines logging a few records at the same moment find each
// other's records queued ahead of theirs: each record is nonetheless in the
// output when its Enqueue returns (written through, or waited for), so a
// program that returns right after loses nothing. MaxLatency is long so
// that no wait ends at its bound on a loaded machine.
func TestQuietWaitConcurrentBurst(t *testing.T) {
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, lines := sc.make(t)
			b := newTestBus(t, w, Config{WriteThrough: true, MaxLatency: time.Hour}, nil)
			const goroutines, per = 8, 5
			var wg sync.WaitGroup
			errs := make(chan error, goroutines*per)
			for g := range goroutines {
				wg.Go(func() {
					for i := range per {
						p := []byte(fmt.Sprintf("g%d i%d\n", g, i))
						if err := b.Enqueue(p); err != nil {
							errs <- err
							return
						}
						// Enqueue returned: p must be in the output now.
						found := false
						for _, l := range lines() {
							found = found || bytes.Equal(l, p)
						}
						if !found {
							errs <- fmt.Errorf("%q not in the output when Enqueue returned", p)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			st := b.Stats()
			assert.EqualValues(t, goroutines*per, st.Written, "every record written before Close: %+v", st)
			assert.Zero(t, st.QueueDepth)
			closeBus(t, b)
			requireAccounting(t, b.Stats())
			got := lines()
			require.Len(t, got, goroutines*per, "Close writes nothing twice")
			next := make([]int, goroutines)
			for _, l := range got {
				var g, i int
				_, err := fmt.Sscanf(string(l), "g%d i%d\n", &g, &i)
				require.NoError(t, err)
				require.Equal(t, next[g], i, "goroutine %d's records in order", g)
				next[g]++
			}
		})
	}
}

// The quiet wait's rate limit: once it is spent, a record that finds a
// short queue ahead of it is only queued, even while the output is stuck.
func TestQuietWaitRateLimit(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{WriteThrough: true, MaxLatency: time.Hour, qwBurst: 1, qwInterval: time.Hour}, nil)
	first := make(chan error, 1)
	go func() { first <- b.Enqueue(payload(0, 30)) }()
	<-s.entered // record 0 is being written through, stuck in the sink
	waited := make(chan error, 1)
	go func() { waited <- b.Enqueue(payload(1, 30)) }()
	// Record 1 finds record 0 ahead of it and spends the one token.
	waitFor(t, "record 1 takes the quiet wait's token", func() bool { return b.qwLimit.tat.Load() != 0 })
	third := make(chan error, 1)
	go func() { third <- b.Enqueue(payload(2, 30)) }()
	select {
	case err := <-third:
		require.NoError(t, err)
	case <-time.After(10 * time.Second): // a failure detector: the call should not block at all
		t.Fatal("record 2 waited although the quiet wait's limit was spent")
	}
	select {
	case err := <-waited:
		t.Fatalf("record 1 stopped waiting (%v) while the output was stuck", err)
	default:
	}
	close(s.gate)
	require.NoError(t, <-first)
	require.NoError(t, <-waited)
	recs := s.records()
	require.GreaterOrEqual(t, len(recs), 2, "record 1 is in the output when its Enqueue returns")
	closeBus(t, b)
	recs = s.records()
	require.Len(t, recs, 3)
	for i, r := range recs {
		assert.Equal(t, payload(i, 30), r, "record %d in order", i)
	}
	requireAccounting(t, b.Stats())
}

// A writer that logs through the bus it serves, from inside its Write (a
// network writer reporting a reconnect through slog.Default, say): the
// inner record finds the outer one ahead of it, but its quiet wait cannot
// be answered while the outer Write runs. It ends at MaxLatency, the record
// stays queued, and nothing deadlocks or is lost.
func TestQuietWaitFromInsideWrite(t *testing.T) {
	for _, writeThrough := range []bool{true, false} {
		t.Run(fmt.Sprintf("outer written through %v", writeThrough), func(t *testing.T) {
			var b *Bus
			s := &reentrantSink{}
			s.enqueue = func() error { return b.Enqueue([]byte("inner\n")) }
			b = newTestBus(t, s, Config{WriteThrough: true, MaxLatency: 20 * time.Millisecond}, nil)
			if !writeThrough {
				// The outer record goes to the drainer: spend the
				// write-through limit first with records that do not reenter.
				b.wtLimit.interval, b.wtLimit.tolerance = int64(time.Hour), 0
				require.NoError(t, b.Enqueue([]byte("spend\n")))
			}
			require.NoError(t, b.Enqueue([]byte("outer\n")))
			require.NoError(t, b.Flush(context.Background()))
			require.NoError(t, <-s.innerErr)
			closeBus(t, b)
			got := string(s.bytes())
			assert.Contains(t, got, "outer\ninner\n")
			requireAccounting(t, b.Stats())
		})
	}
}

// reentrantSink is a plain writer whose Write, on its first "outer" record,
// calls enqueue (which enqueues on the bus that is writing to it) and
// reports the result on innerErr.
type reentrantSink struct {
	streamSink
	once     sync.Once
	enqueue  func() error
	innerErr chan error
}

func (s *reentrantSink) Write(p []byte) (int, error) {
	s.once.Do(func() { s.innerErr = make(chan error, 1) })
	n, err := s.streamSink.Write(p)
	if bytes.Equal(p, []byte("outer\n")) {
		s.innerErr <- s.enqueue()
	}
	return n, err
}
