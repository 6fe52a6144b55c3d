package bus

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFailingSinkRecovers(t *testing.T) {
	cases := []struct {
		name       string
		failCalls  int // the first failCalls sink calls fail
		wantFailed bool
	}{
		{"transient", 3, false},    // fewer failures than attempts per batch
		{"outage", 40, true},       // several batches give up, then the sink recovers
		{"short-outage", 1, false}, // one failure
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &batchSink{fail: func(call int) error {
				if call <= tc.failCalls {
					return errSink
				}
				return nil
			}}
			var reports atomic.Int32
			cfg := Config{Capacity: 4096, OnError: func(err error) {
				var se *OutputError
				if assert.ErrorAs(t, err, &se) {
					assert.ErrorIs(t, err, errSink)
					assert.Equal(t, "write", se.Op)
				}
				reports.Add(1)
			}}
			b := newTestBus(t, sink, cfg, fastRetry)
			var flushErrs int
			for i := range 60 {
				require.NoError(t, b.Enqueue(rec(nil, 0, i, 20)))
				if err := b.Flush(context.Background()); err != nil {
					var se *OutputError
					require.ErrorAs(t, err, &se)
					require.ErrorIs(t, err, errSink)
					flushErrs++
				}
			}
			if tc.wantFailed {
				closeBusFailed(t, b, errSink)
			} else {
				closeBus(t, b)
			}
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, 60, st.Enqueued)
			require.GreaterOrEqual(t, reports.Load(), int32(1))
			recs := sink.records()
			require.EqualValues(t, len(recs), st.Written)
			if tc.wantFailed {
				require.NotZero(t, st.Failed)
				require.NotZero(t, flushErrs)
			} else {
				require.Zero(t, st.Failed)
				require.Zero(t, flushErrs)
			}
			// Whatever was written is in order and unique, and the last record
			// (after recovery) made it.
			last := -1
			for _, r := range recs {
				_, s, err := parseRec(r)
				require.NoError(t, err)
				require.Greater(t, s, last)
				last = s
			}
			require.Equal(t, 59, last)
		})
	}
}

func TestStreamSinkShortWritesAndErrors(t *testing.T) {
	sink := &streamSink{maxWrite: 7, failAt: map[int]bool{2: true, 5: true}}
	b := newTestBus(t, sink, Config{Capacity: 1024}, fastRetry)
	var want bytes.Buffer
	for i := range 300 {
		p := payload(i, 1+i%90)
		require.NoError(t, b.Enqueue(p))
		want.Write(p)
	}
	closeBus(t, b)
	require.Equal(t, want.String(), string(sink.bytes()))
	st := b.Stats()
	requireAccounting(t, st)
	require.Zero(t, st.Failed)
}

// TestRegularFileStagingSizedOnce: a regular file is written from a staged
// copy of the batch (outputCopy), in a buffer sized once for cacheBatch:
// records past it wait for the next batch, and an oversize record larger
// than the buffer goes out from its own memory, so the buffer never grows.
func TestRegularFileStagingSizedOnce(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	defer f.Close()
	b := newTestBus(t, f, Config{Capacity: 64 << 10}, nil)
	require.Equal(t, outputCopy, b.kind, "a regular file is written with one write of a staged copy")
	staging := cap(b.d.staging)
	require.Greater(t, staging, cacheBatch)
	big := payload(1, 2*cacheBatch)
	small := payload(2, 100)
	require.NoError(t, b.Enqueue(small))
	require.NoError(t, b.Enqueue(big))
	require.NoError(t, b.Enqueue(small))
	closeBus(t, b) // the drainer has exited: its state may be read
	assert.Equal(t, staging, cap(b.d.staging), "never regrown")
	st := b.Stats()
	assert.EqualValues(t, 3, st.Written)
	assert.EqualValues(t, 1, st.Oversize)
	data, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	assert.Equal(t, string(small)+string(big)+string(small), string(data))
}

// tearWriter is a plain io.Writer (the copy path) that fails part-way
// through a record: call tearAt writes only cut bytes and fails, the next
// down calls fail without writing, and then it works again; with hold set,
// it keeps failing until hold is cleared.
type tearWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	calls  int
	tearAt int
	cut    int
	down   int
	hold   atomic.Bool
}

func (w *tearWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	switch {
	case w.calls == w.tearAt:
		n, _ := w.buf.Write(p[:min(w.cut, len(p))])
		return n, errSink
	case w.calls > w.tearAt && (w.calls <= w.tearAt+w.down || w.hold.Load()):
		return 0, errSink
	}
	return w.buf.Write(p)
}

func (w *tearWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// TestTornRecordIsEndedByNewline: a writer that fails
// part-way through a record for longer than the batch's retry budget, then
// recovers. The fragment is ended with a newline before the next record, so
// no record is glued to it; the torn record counts as failed, the glued one
// would have counted as written.
func TestTornRecordIsEndedByNewline(t *testing.T) {
	w := &tearWriter{tearAt: 1, cut: 10}
	w.hold.Store(true)
	b := newTestBus(t, w, Config{Capacity: 4096}, fastRetry)
	for i := range 3 {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, 40)))
	}
	err := b.Flush(context.Background())
	require.ErrorIs(t, err, errSink)
	require.EqualValues(t, 3, b.Stats().Failed, "the torn record and the two after it")

	// The writer recovers: log until a record is written (Flush probes).
	w.hold.Store(false)
	first := 3
	for ; ; first++ {
		require.NoError(t, b.Enqueue(rec(nil, 0, first, 40)))
		if b.Flush(context.Background()) == nil {
			break
		}
		require.Less(t, first, 1000, "never recovered")
	}
	for i := first + 1; i < first+5; i++ {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, 40)))
	}
	closeBusFailed(t, b, errSink)
	st := b.Stats()
	requireAccounting(t, st)

	lines := splitLines(w.bytes())
	require.NotEmpty(t, lines)
	require.Equal(t, string(rec(nil, 0, 0, 40)[:10])+"\n", string(lines[0]), "the fragment, ended by a newline")
	var written []int
	for _, l := range lines[1:] {
		_, s, err := parseRec(l)
		require.NoError(t, err, "no record glued to the fragment")
		written = append(written, s)
	}
	require.EqualValues(t, len(written), st.Written)
	require.Equal(t, []int{first, first + 1, first + 2, first + 3, first + 4}, written)
}

// TestCutBack: the fragment is removed only from a regular file whose end
// is still our fragment's end.
func TestCutBack(t *testing.T) {
	dir := t.TempDir()
	t.Run("regular file", func(t *testing.T) {
		f, err := os.Create(filepath.Join(dir, "plain"))
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("whole\nfrag")
		require.NoError(t, err)
		require.NoError(t, cutBack(f, 4))
		_, err = f.WriteString("next\n")
		require.NoError(t, err)
		got, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		require.Equal(t, "whole\nnext\n", string(got), "offset moved back too: no hole")
	})
	t.Run("another writer appended after the fragment", func(t *testing.T) {
		path := filepath.Join(dir, "shared")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("whole\nfrag")
		require.NoError(t, err)
		other, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = other.WriteString("theirs\n")
		require.NoError(t, err)
		require.NoError(t, other.Close())
		require.ErrorIs(t, cutBack(f, 4), errNotCut)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "whole\nfragtheirs\n", string(got), "their bytes are not cut")
	})
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		defer r.Close()
		defer w.Close()
		require.ErrorIs(t, cutBack(w, 1), errNotCut)
	})
	t.Run("not a file", func(t *testing.T) {
		require.ErrorIs(t, cutBack(&bytes.Buffer{}, 1), errNotCut)
	})
}

// Space comes back as the output takes bytes: behind a slow output a
// blocked producer waits for about the bytes ahead of it (a batch of a
// few milliseconds of output, once the output's rate is measured), not
// for a batch of the whole ring to be written.
func TestSlowOutputReleasesSpaceAsItGoes(t *testing.T) {
	const capacity, producers, size = 128 << 10, 8, 128
	w := newPacedWriter(512, time.Millisecond)
	b := newTestBus(t, w, Config{Capacity: capacity, Overflow: Block}, nil)
	measured := func() bool { return b.Stats().OutputRate != 0 }
	maxWait, counts := blockedWaits(t, b, w, producers, size, 2*capacity, measured)
	closeBus(t, b)
	requireAccounting(t, b.Stats())
	// A batch of minBatchBytes (batchSpan at ~0.5 MB/s is less), the records
	// ahead, one call: well under a quarter of the ring, which was the
	// batch before.
	bound := uint64(capacity / 4)
	assert.LessOrEqual(t, maxWait, bound, "the longest wait, in bytes of output; records per producer %v", counts)
}

// The batch cap follows the measured rate: batchSpan of it, at least
// minBatchBytes, and before a rate is measured unmeasuredBatchBytes; a
// plain writer's batch is at most cacheBatch (its staging buffer),
// whatever the rate.
func TestBatchCapFollowsTheRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind outputKind
		rate uint64
		want int
	}{
		{"not measured", outputWritev, 0, unmeasuredBatchBytes},
		{"2 MB/s", outputWritev, 2_000_000, 6_250}, // batchSpan: 3.125 ms
		{"100 MB/s", outputWritev, 100_000_000, 312_500},
		{"100 MB/s into a plain writer", outputCopy, 100_000_000, cacheBatch},
		{"slow plain writer", outputCopy, 500_000, minBatchBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Bus{kind: tc.kind}
			b.d.b = b
			b.d.batchRate = tc.rate
			assert.Equal(t, tc.want, b.d.batchCap())
		})
	}
}

// A drainer that keeps up keeps the producers at the start of the ring:
// once the ring is empty rewindAt bytes or more into its memory, the next
// record goes to offset 0, so the offsets used stay below rewindAt plus
// what is queued between two empty rings, while the positions go round
// the ring many times; every record is written once, in order.
func TestRewindKeepsTheRingStart(t *testing.T) {
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, records := sc.make(t)
			const capacity, size, perFlush, n = 1 << 20, 1000, 50, 4000
			b := newTestBus(t, w, Config{Capacity: capacity}, nil)
			require.Equal(t, uint64(cacheBatch), b.rewindAt, "a 1 MiB ring's largest entry is an eighth of it")
			var maxOff uint64
			for i := range n {
				require.NoError(t, b.Enqueue(payload(i, size)))
				// The tail's offset: the end of the records queued, or 0
				// once the drainer rewound the emptied ring.
				maxOff = max(maxOff, uint64(b.offsetOf(b.tail.Load())))
				if i%perFlush == perFlush-1 {
					require.NoError(t, b.Flush(context.Background()))
				}
			}
			assert.Greater(t, b.tail.Load(), uint64(3*capacity), "the positions went round the ring")
			assert.Less(t, maxOff, b.rewindAt+perFlush*align8(hdrSize+size), "only the ring's start was used")
			closeBus(t, b)
			got := records()
			require.Len(t, got, n)
			for i, r := range got {
				require.Equal(t, payload(i, size), r, "record %d", i)
			}
			requireAccounting(t, b.Stats())
		})
	}
}

// Without a drainer that empties the ring (its output holds the first
// batch), the producers fill the whole ring: a rewind needs an empty ring.
func TestRewindNeedsAnEmptyRing(t *testing.T) {
	w := newHungWriter()
	const capacity, size = 1 << 20, 1000
	b := newTestBus(t, w, Config{Capacity: capacity}, patient)
	require.NoError(t, b.Enqueue(payload(0, size)))
	<-w.entered
	var maxOff uint64
	for i := 1; uint64(i) < capacity/2/align8(hdrSize+size); i++ {
		require.NoError(t, b.Enqueue(payload(i, size)))
		maxOff = max(maxOff, uint64(b.offsetOf(b.tail.Load())))
	}
	assert.Greater(t, maxOff, b.rewindAt, "a queued ring grows past rewindAt")
	stop := make(chan struct{})
	go func() { // the writer signals each call; take the signals until Close returns
		for {
			select {
			case <-w.entered:
			case <-stop:
				return
			}
		}
	}()
	close(w.gate)
	closeBus(t, b)
	close(stop)
	requireAccounting(t, b.Stats())
}

// The drainer over a real outage: attempts spent (down), the probe that
// makes no progress (down again), then one that does (up).
func TestOutputDownOverAnOutage(t *testing.T) {
	sink := &switchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096, WriteAttempts: 2}, fastRetry)
	sink.down.Store(true)
	_ = b.Enqueue(payload(1, 10))
	assert.Error(t, b.Flush(t.Context()))
	sink.down.Store(false)
	_ = b.Enqueue(payload(2, 10))
	assert.NoError(t, b.Flush(t.Context()), "the Flush's probe writes: healthy again")
	closeBusFailed(t, b, errDown)
	assert.False(t, b.d.down)
	assert.False(t, b.d.probing)
}
