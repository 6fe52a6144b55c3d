package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   batchInputs
		want batchAction
	}{
		{"up, busy: write", batchInputs{}, actWrite},
		{"up, small after a sleep: gather", batchInputs{small: true, gather: true}, actGather},
		{"small but not after a sleep or small round: write", batchInputs{small: true}, actWrite},
		{"gather cut short by a Flush", batchInputs{small: true, gather: true, urgent: true}, actWrite},
		{"gather cut short by the watermark", batchInputs{small: true, gather: true, pastWatermark: true}, actWrite},
		{"down, probe not due, room to spare: hold", batchInputs{down: true}, actHold},
		{"down, probe due: probe", batchInputs{down: true, probeDue: true}, actProbe},
		{"down, a Flush waits: probe now", batchInputs{down: true, urgent: true}, actProbe},
		{"down, past the watermark: fail fast", batchInputs{down: true, pastWatermark: true}, actFailFast},
		{"down, a Block caller waits: fail fast", batchInputs{down: true, blocked: true}, actFailFast},
		{"down, the hold was woken: fail fast", batchInputs{down: true, woken: true}, actFailFast},
		{"down, probe due beats the watermark", batchInputs{down: true, probeDue: true, pastWatermark: true}, actProbe},
		{"down, small after a sleep: gather first", batchInputs{down: true, small: true, gather: true}, actGather},
		{"Close gave up: fail fast, whatever else", batchInputs{urgent: true, aborted: true}, actFailFast},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want.String(), batchActionFor(tc.in).String())
		})
	}
}

// TestFailingOutputDoesNotStallBlock: with an output that
// always fails, a 64 KiB ring and Block mode, callers logging a fixed number
// of records all return, the records are counted as failed, Close finishes
// the drain (it does not give up at its deadline), and once the output
// works again new records are written. The deadlines are hang guards only:
// before the fix, each batch waited out the back-off (about 3 s per batch
// once it had grown), and these callers needed minutes.
func TestFailingOutputDoesNotStallBlock(t *testing.T) {
	const callers, perCaller, size = 8, 4000, 100
	w := &switchWriter{}
	w.broken.Store(true)
	var reports atomic.Int64
	b := newTestBus(t, w, Config{Capacity: 64 << 10, Overflow: Block, OnError: func(error) { reports.Add(1) }}, nil)
	guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	var refused atomic.Int64
	for p := range callers {
		wg.Go(func() {
			var buf []byte
			for s := range perCaller {
				buf = rec(buf, p, s, size)
				if b.Enqueue(buf) != nil {
					refused.Add(1)
				}
			}
		})
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-guard.Done():
		t.Fatalf("Block callers stalled behind a failing output: %+v", b.Stats())
	}
	require.Zero(t, refused.Load(), "Block accepts every record")
	err := b.Flush(guard)
	require.ErrorIs(t, err, errSink, "Flush answers with the output's failure, before the guard")
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, callers*perCaller, st.Failed)
	require.Zero(t, st.Written)

	// The output recovers: a probe finds it working, and from then on
	// every record is written.
	w.broken.Store(false)
	extra := 0
	for {
		require.NoError(t, b.Enqueue(rec(nil, 99, extra, size)))
		extra++
		if err := b.Flush(guard); err == nil {
			break
		}
		require.NoError(t, guard.Err(), "the output recovered but nothing was written")
	}
	before := b.Stats().Written
	require.EqualValues(t, 1, before, "the record whose Flush succeeded")
	for i := range 100 {
		require.NoError(t, b.Enqueue(rec(nil, 99, extra+i, size)))
	}
	require.NoError(t, b.Flush(guard))
	err = b.Close(guard)
	var se *OutputError
	require.ErrorAs(t, err, &se, "Close drains before its deadline and reports the records that failed during the outage")
	require.ErrorIs(t, err, errSink)
	require.Equal(t, b.Stats().Failed, se.Failed)
	st = b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, before+100, st.Written)
	require.EqualValues(t, callers*perCaller+extra-1, st.Failed)
	require.NotZero(t, b.d.fastFails, "failed batches without calling the output")
	require.Less(t, w.calls.Load(), uint64(callers*perCaller), "the failing output was probed, not called per record")
	require.NotZero(t, reports.Load())
	lines := splitLines(w.bytes())
	require.Len(t, lines, 101)
	for i, l := range lines {
		p, s, err := parseRec(l)
		require.NoError(t, err)
		require.Equal(t, 99, p)
		require.Equal(t, extra-1+i, s)
	}
}
