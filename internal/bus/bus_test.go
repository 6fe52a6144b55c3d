package bus

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestStress(t *testing.T) {
	producers, perProducer := 64, 100_000
	if testing.Short() {
		perProducer = 5_000
	}
	sink := &checkSink{next: make([]int, producers)}
	b := newTestBus(t, sink, Config{Capacity: 256 << 10}, nil)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var buf []byte
			for s := range perProducer {
				buf = rec(buf, p, s, 16+(p+s)%64)
				if err := b.Enqueue(buf); err != nil {
					t.Errorf("producer %d seq %d: %v", p, s, err)
					return
				}
			}
		})
	}
	wg.Wait()
	closeBus(t, b)
	require.NoError(t, sink.err)
	require.Equal(t, producers*perProducer, sink.records)
	for p, n := range sink.next {
		require.Equal(t, perProducer, n, "producer %d", p)
	}
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, producers*perProducer, st.Written)
	require.Zero(t, st.Dropped)
	require.Less(t, st.WriteCalls, st.Written/8, "batching: %+v", st)
	t.Logf("stress: %d records, %d batches, %d write calls, high water %d/%d", st.Written, st.Batches, st.WriteCalls, st.QueueHighWater, st.Capacity)
}

// TestSlowSink runs several producers against a sleeping sink in each mode and
// checks exact accounting, exactly-once order and that, per producer, a marker
// separates the records accepted before and after each of its drops.
func TestSlowSink(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"Block", Config{Overflow: Block}},
		{"Drop", Config{Overflow: Drop}},
		{"BlockTimeout", Config{Overflow: Block, BlockTimeout: 200 * time.Microsecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const producers, perProducer = 4, 1500
			sink := &batchSink{sleep: 200 * time.Microsecond}
			cfg := tc.cfg
			cfg.Capacity = 2048
			cfg.maxBatch = 16
			cfg.minBatch = 4
			b := newTestBus(t, sink, cfg, nil)
			droppedAfter := make([]map[int]bool, producers) // seq accepted right after a drop
			var wg sync.WaitGroup
			for p := range producers {
				droppedAfter[p] = map[int]bool{}
				wg.Go(func() {
					var buf []byte
					sawDrop := false
					for s, i := 0, 0; i < perProducer; i++ {
						buf = rec(buf, p, s, 48)
						switch err := b.Enqueue(buf); {
						case err == nil:
							if sawDrop {
								droppedAfter[p][s] = true
							}
							sawDrop = false
							s++
						case errors.Is(err, ErrDropped):
							sawDrop = true
						default:
							t.Errorf("unexpected %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			closeBus(t, b)
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, producers*perProducer, st.Enqueued)

			next := make([]int, producers)
			markerSince := make([]bool, producers)
			var markerSum uint64
			for _, r := range sink.records() {
				if bytes.HasPrefix(r, []byte("asyncbus: dropped ")) {
					n, err := strconv.ParseUint(string(r[len("asyncbus: dropped "):len(r)-len(" records\n")]), 10, 64)
					require.NoError(t, err)
					markerSum += n
					for p := range markerSince {
						markerSince[p] = true
					}
					continue
				}
				p, s, err := parseRec(r)
				require.NoError(t, err)
				require.Equal(t, next[p], s, "producer %d order", p)
				if droppedAfter[p][s] && s > 0 {
					require.True(t, markerSince[p], "producer %d: no marker between seq %d and %d", p, s-1, s)
				}
				markerSince[p] = false
				next[p]++
			}
			require.Equal(t, st.Dropped, markerSum, "markers account for every drop")
			require.EqualValues(t, st.Written, next[0]+next[1]+next[2]+next[3])
			if tc.cfg.Overflow == Block && tc.cfg.BlockTimeout == 0 {
				require.Zero(t, st.Dropped)
			}
		})
	}
}

func TestHeaderLayoutInRingMemory(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b, err := testNew(sink, Config{Capacity: 512})
	require.NoError(t, err)
	require.EqualValues(t, 512, b.Stats().Capacity)
	mem := b.mem
	require.Equal(t, unsafe.Pointer(&mem[0]), b.base)
	require.Zero(t, uintptr(b.base)%8, "the ring's base is 8-byte aligned")

	require.NoError(t, b.Enqueue([]byte("first\n")))
	<-sink.entered // the drainer holds "first" in the ring, blocked in the sink
	require.NoError(t, b.Enqueue([]byte("abc\n")))
	// Entry 1 starts at 16: header word (committed, length 4), then the payload.
	off := align8(hdrSize + 6)
	require.Zero(t, uintptr(unsafe.Pointer(&mem[off]))%8)
	require.Equal(t, flagCommit|4, *(*uint64)(unsafe.Pointer(&mem[off])))
	require.Equal(t, "abc\n", string(mem[off+8:off+12]))
	close(sink.gate)
	closeBus(t, b)
	require.Equal(t, [][]byte{[]byte("first\n"), []byte("abc\n")}, sink.records())
	require.Equal(t, make([]byte, len(mem)), mem, "consumed space is zeroed")
}
