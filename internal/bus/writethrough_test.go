package bus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A quiet producer's records are in the output when Enqueue returns, for
// every sink kind, without Flush, and counted like any record.
func TestWriteThroughQuietIsSynchronous(t *testing.T) {
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, lines := sc.make(t)
			b := newTestBus(t, w, Config{WriteThrough: true}, nil)
			for i := range 10 {
				p := payload(i, 40+i)
				require.NoError(t, b.Enqueue(p))
				got := lines()
				require.Len(t, got, i+1, "record %d is written before Enqueue returns", i)
				require.Equal(t, p, got[i])
			}
			st := b.Stats()
			assert.EqualValues(t, 10, st.WriteThrough)
			assert.EqualValues(t, 10, st.Written)
			assert.EqualValues(t, 10, st.Enqueued)
			assert.Zero(t, st.QueueDepth)
			closeBus(t, b)
			requireAccounting(t, b.Stats())
			assert.Len(t, lines(), 10, "Close writes nothing twice")
		})
	}
}

// Without WriteThrough (the bus default) nothing is written on the caller.
func TestWriteThroughOff(t *testing.T) {
	s := &batchSink{}
	b := newTestBus(t, s, Config{}, nil)
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i, 40)))
	}
	require.NoError(t, b.Flush(context.Background()))
	st := b.Stats()
	assert.Zero(t, st.WriteThrough)
	assert.EqualValues(t, 10, st.Written)
	closeBus(t, b)
}

// The rate limit: a burst of wtBurst records is written through, the next
// one (same instant, far below one interval later) goes through the ring.
func TestWriteThroughRateLimit(t *testing.T) {
	s := &streamSink{}
	b := newTestBus(t, s, Config{WriteThrough: true, wtBurst: 4, wtInterval: time.Hour}, nil)
	for i := range 6 {
		require.NoError(t, b.Enqueue(payload(i, 30)))
	}
	assert.EqualValues(t, 4, b.Stats().WriteThrough)
	require.NoError(t, b.Flush(context.Background()))
	got := splitLines(s.bytes())
	require.Len(t, got, 6)
	for i, r := range got {
		assert.Equal(t, payload(i, 30), r, "record %d in order", i)
	}
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}

// EnqueueWritten writes through whatever the rate limit says, and when the
// ring is busy it returns only once the drainer has written the record
// (without syncing).
func TestEnqueueWritten(t *testing.T) {
	t.Run("write-through past the rate limit", func(t *testing.T) {
		s := &streamSink{}
		b := newTestBus(t, s, Config{WriteThrough: true, wtBurst: 1, wtInterval: time.Hour}, nil)
		for i := range 5 {
			require.NoError(t, b.EnqueueWritten(payload(i, 30)))
			require.Len(t, splitLines(s.bytes()), i+1)
		}
		assert.EqualValues(t, 5, b.Stats().WriteThrough)
		closeBus(t, b)
	})
	t.Run("waits for the drainer", func(t *testing.T) {
		s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
		b := newTestBus(t, s, Config{}, nil)
		require.NoError(t, b.Enqueue(payload(0, 30)))
		<-s.entered // the drainer is stuck in the sink with record 0
		done := make(chan error, 1)
		go func() { done <- b.EnqueueWritten(payload(1, 30)) }()
		select {
		case err := <-done:
			t.Fatalf("EnqueueWritten returned (%v) while the sink was stuck", err)
		default:
		}
		close(s.gate)
		require.NoError(t, <-done)
		recs := s.records()
		require.Len(t, recs, 2, "the record is in the sink when EnqueueWritten returns")
		assert.Equal(t, payload(1, 30), recs[1])
		s.mu.Lock()
		assert.Zero(t, s.syncs, "written, not synced")
		s.mu.Unlock()
		closeBus(t, b)
	})
}

// A sink that fails or writes short during a write-through: the record
// takes the ring from where the sink stopped, and the output is whole.
func TestWriteThroughSinkFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		sink *streamSink
	}{
		{"error", &streamSink{failAt: map[int]bool{1: true, 3: true}}},
		{"short", &streamSink{maxWrite: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBus(t, tc.sink, Config{WriteThrough: true}, fastRetry)
			var want [][]byte
			for i := range 5 {
				p := payload(i, 30)
				want = append(want, p)
				require.NoError(t, b.Enqueue(p))
			}
			closeBus(t, b)
			assert.Equal(t, want, splitLines(tc.sink.bytes()))
			st := b.Stats()
			requireAccounting(t, st)
			assert.EqualValues(t, 5, st.Written)
			assert.Zero(t, st.Failed)
		})
	}
}

// Many producers mixing write-through, EnqueueWritten and the ring (no rate
// limit, so every producer that finds the ring empty writes through): every
// record exactly once, in per-producer order, nothing torn, the counts
// exact. checkSink has no lock of its own: the race detector checks that
// the drainer and write-throughs never call the sink at the same time.
func TestWriteThroughStress(t *testing.T) {
	producers, perProducer := 16, 5_000
	if testing.Short() {
		perProducer = 1_000
	}
	type sinkMaker struct {
		name  string
		make  func(t *testing.T) io.Writer
		check func(t *testing.T, w io.Writer)
	}
	checkLines := func(t *testing.T, data []byte) {
		next := make([]int, producers)
		for _, r := range splitLines(data) {
			p, s, err := parseRec(r)
			require.NoError(t, err)
			require.Equal(t, next[p], s, "producer %d order", p)
			next[p]++
		}
		for p, n := range next {
			require.Equal(t, perProducer, n, "producer %d", p)
		}
	}
	for _, sm := range []sinkMaker{
		{"batch", func(*testing.T) io.Writer { return &checkSink{next: make([]int, producers)} }, func(t *testing.T, w io.Writer) {
			c := w.(*checkSink)
			require.NoError(t, c.err)
			require.Equal(t, producers*perProducer, c.records)
		}},
		{"stream", func(*testing.T) io.Writer { return &streamSink{} }, func(t *testing.T, w io.Writer) {
			checkLines(t, w.(*streamSink).bytes())
		}},
		{"file", func(t *testing.T) io.Writer {
			f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			return f
		}, func(t *testing.T, w io.Writer) {
			data, err := os.ReadFile(w.(*os.File).Name())
			require.NoError(t, err)
			checkLines(t, data)
		}},
	} {
		t.Run(sm.name, func(t *testing.T) {
			w := sm.make(t)
			b := newTestBus(t, w, Config{Capacity: 64 << 10, WriteThrough: true, wtInterval: -1}, nil)
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					var buf []byte
					for s := range perProducer {
						buf = rec(buf, p, s, 16+(p+s)%64)
						var err error
						switch {
						case p%4 == 0 && s%16 == 0:
							err = b.EnqueueWritten(buf)
						case p%4 == 1 && s%512 == 0:
							err = b.Flush(context.Background())
							if err == nil {
								err = b.Enqueue(buf)
							}
						default:
							err = b.Enqueue(buf)
						}
						if err != nil {
							t.Errorf("producer %d seq %d: %v", p, s, err)
							return
						}
					}
				})
			}
			wg.Wait()
			closeBus(t, b)
			sm.check(t, w)
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, producers*perProducer, st.Written)
			require.EqualValues(t, producers*perProducer, st.Enqueued)
			// How many records take each path depends on the scheduler:
			// logged, not asserted (TestWriteThroughAlternatingOrder takes
			// both paths deterministically).
			t.Logf("%s: %d records, %d written through, %d batches", sm.name, st.Written, st.WriteThrough, st.Batches)
		})
	}
}

// One producer alternating between the two paths, deterministically: the
// rate limit's one token takes record 0 through, every third record is
// forced through (EnqueueWritten) into a ring emptied by Flush, the others
// are rate-limited into the ring and woken for. Its order holds across them.
func TestWriteThroughAlternatingOrder(t *testing.T) {
	s := &streamSink{}
	b := newTestBus(t, s, Config{WriteThrough: true, wtBurst: 1, wtInterval: time.Hour}, nil)
	var buf []byte
	const n = 3_000
	wantThrough := 1 // record 0, on the token
	for i := range n {
		buf = rec(buf, 0, i, 20+i%50)
		if i%3 == 2 {
			require.NoError(t, b.Flush(context.Background()))
			require.NoError(t, b.EnqueueWritten(buf))
			wantThrough++
			continue
		}
		require.NoError(t, b.Enqueue(buf))
	}
	require.NoError(t, b.Flush(context.Background()))
	lines := splitLines(s.bytes())
	require.Len(t, lines, n)
	for i, r := range lines {
		p, seq, err := parseRec(r)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, i}, [2]int{p, seq})
	}
	st := b.Stats()
	closeBus(t, b)
	assert.EqualValues(t, n, st.Written)
	assert.EqualValues(t, wantThrough, st.WriteThrough, "record 0 and every forced record written through, the rest through the ring")
	requireAccounting(t, b.Stats())
}

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
	closeBusFailed(t, b, errNoSpace) // the first record's failure, reported to Flush, is Close's verdict too
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
	closeBusFailed(t, b, errNoSpace)
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

// Write-through is for a quiet handler: under sustained logging from
// several goroutines (no rate limit here, only quietness) at most 1 % of
// the records are written on their callers, and a record logged once the
// output has had no call for QuietAfter is written through again.
func TestWriteThroughOnlyWhenQuiet(t *testing.T) {
	const goroutines, per = 4, 5000
	s := &streamSink{}
	b := newTestBus(t, s, Config{WriteThrough: true, quietAfter: QuietAfter, wtInterval: -1, qwBurst: 1, qwInterval: time.Hour}, nil)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			var buf []byte
			for i := range per {
				buf = rec(buf, g, i, 100)
				assert.NoError(t, b.Enqueue(buf))
			}
		})
	}
	wg.Wait()
	require.NoError(t, b.Flush(context.Background()))
	busy := b.Stats().WriteThrough
	assert.LessOrEqual(t, busy, uint64(goroutines*per/100), "records written on their callers under load")

	waitFor(t, "the handler is quiet", b.quiet)
	p := payload(1, 40)
	require.NoError(t, b.Enqueue(p))
	assert.Equal(t, busy+1, b.Stats().WriteThrough, "a quiet moment's record is written through")
	got := splitLines(s.bytes())
	assert.Equal(t, p, got[len(got)-1])
	closeBus(t, b)
	requireAccounting(t, b.Stats())
}
