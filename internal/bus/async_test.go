package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
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

func TestWrapAroundEveryOffset(t *testing.T) {
	const capacity = 256
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, read := sc.make(t)
			b := newTestBus(t, w, Config{Capacity: capacity}, nil)
			maxRec := b.maxRecord
			sizes := []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 24, maxRec - 1, maxRec, maxRec + 1, capacity, 3 * capacity}
			var want [][]byte
			seen := map[[2]uint64]bool{}
			for off := uint64(0); off < capacity; off += 8 {
				for _, size := range sizes {
					for b.tail.Load()&b.mask != off { // move the tail with empty records
						require.NoError(t, b.Enqueue(nil))
					}
					seen[[2]uint64{off, uint64(size)}] = true
					p := payload(len(want), size)
					require.NoError(t, b.Enqueue(p))
					want = append(want, p)
				}
			}
			closeBus(t, b)
			require.Len(t, seen, capacity/8*len(sizes))
			require.Equal(t, want, read())
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, 3*capacity/8, st.Oversize)
		})
	}
}

func TestHeaderLayoutInCallerMemory(t *testing.T) {
	words := make([]uint64, 64+1)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)

	require.PanicsWithValue(t, "bus: Config.memory is not 8-byte aligned", func() {
		_, _ = testNew(io.Discard, Config{memory: raw[1:]})
	})

	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	mem := raw[8:] // aligned, 512 bytes after the slot we skip
	b, err := testNew(sink, Config{memory: mem})
	require.NoError(t, err)
	require.EqualValues(t, 512, b.Stats().Capacity)
	require.Equal(t, unsafe.Pointer(&mem[0]), b.base, "ring must use the caller's memory")

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

func TestOversizeKeepsOrder(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 1024, maxRecord: 64}, nil)
	var want [][]byte
	for i := range 200 {
		size := 10 + i%50
		if i%7 == 0 {
			size = 65 + i*13 // oversize, some larger than the ring
		}
		p := payload(i, size)
		require.NoError(t, b.Enqueue(p))
		want = append(want, p)
	}
	closeBus(t, b)
	require.Equal(t, want, sink.records())
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 29, st.Oversize)
	require.Zero(t, b.oversizeBytes.Load())
}

func TestCloseDuringProduction(t *testing.T) {
	for _, mode := range []Overflow{Block, Drop} {
		t.Run(mode.String(), func(t *testing.T) {
			const producers = 8
			sink := &checkSink{next: make([]int, producers)}
			b := newTestBus(t, sink, Config{Capacity: 4096, Overflow: mode}, nil)
			var accepted, closedErrs [producers]int
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					var buf []byte
					for s := 0; ; {
						buf = rec(buf, p, s, 40)
						switch err := b.Enqueue(buf); {
						case err == nil:
							accepted[p]++
							s++
						case errors.Is(err, ErrDropped):
							// Drop mode: the ring was full; try the same seq again.
						case errors.Is(err, ErrClosed):
							closedErrs[p]++
							if closedErrs[p] == 3 {
								return
							}
						default:
							t.Errorf("unexpected error %v", err)
							return
						}
					}
				})
			}
			waitFor(t, "some records written", func() bool { return b.Stats().Written > 2000 })
			var cw sync.WaitGroup
			for range 3 { // Close from several goroutines at once
				cw.Go(func() { assert.NoError(t, b.Close(context.Background())) })
			}
			cw.Wait()
			wg.Wait()
			require.NoError(t, sink.err)
			st := b.Stats()
			requireAccounting(t, st)
			var total, closed int
			for p := range producers {
				require.Equal(t, accepted[p], sink.next[p], "producer %d: every accepted record written", p)
				total += accepted[p]
				closed += closedErrs[p]
			}
			require.EqualValues(t, total, st.Written)
			require.EqualValues(t, closed, st.DroppedClosed)
			require.NoError(t, b.Close(context.Background()), "idempotent")
			require.ErrorIs(t, b.Enqueue([]byte("late\n")), ErrClosed)
			require.EqualValues(t, closed+1, b.Stats().DroppedClosed)
		})
	}
}

// TestDropMarkerAtGap fills the ring behind a blocked sink, drops, then
// checks the marker sits exactly between the records before and after.
func TestDropMarkerAtGap(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"Drop", Config{Overflow: Drop}},
		{"BlockTimeout", Config{Overflow: Block, BlockTimeout: time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
			cfg := tc.cfg
			cfg.Capacity = 1024
			cfg.DropMarker = func(dst []byte, n uint64) []byte {
				return append(dst, "MARK "+strconv.FormatUint(n, 10)+"\n"...)
			}
			b := newTestBus(t, sink, cfg, nil)
			var want [][]byte
			require.NoError(t, b.Enqueue(payload(0, 40)))
			want = append(want, payload(0, 40))
			<-sink.entered
			i := 1
			for ; ; i++ {
				p := payload(i, 40)
				err := b.Enqueue(p)
				if err != nil {
					require.ErrorIs(t, err, ErrDropped)
					break
				}
				want = append(want, p)
			}
			for j := range 4 {
				require.ErrorIs(t, b.Enqueue(payload(1000+j, 40)), ErrDropped)
			}
			want = append(want, []byte("MARK 5\n"))
			close(sink.gate)
			require.NoError(t, b.Flush(context.Background()))
			for j := range 10 {
				p := payload(2000+j, 40)
				require.NoError(t, b.Enqueue(p))
				want = append(want, p)
			}
			closeBus(t, b)
			require.Equal(t, want, sink.records())
			st := b.Stats()
			requireAccounting(t, st)
			require.EqualValues(t, 5, st.Dropped)
			require.EqualValues(t, 1, st.DropMarkers)
		})
	}
}

func TestBlockWaitsForSpace(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 512}, nil)
	var want [][]byte
	for i := range 100 {
		want = append(want, payload(i, 30))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range want {
			assert.NoError(t, b.Enqueue(p))
		}
	}()
	<-sink.entered
	waitFor(t, "producer parked", func() bool { return b.waiters.Load() > 0 })
	close(sink.gate)
	<-done
	closeBus(t, b)
	require.Equal(t, want, sink.records())
	st := b.Stats()
	requireAccounting(t, st)
	require.Zero(t, st.Dropped)
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
				var se *SinkError
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
					var se *SinkError
					require.ErrorAs(t, err, &se)
					require.ErrorIs(t, err, errSink)
					flushErrs++
				}
			}
			closeBus(t, b)
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

func TestOnErrorRateLimited(t *testing.T) {
	var clock atomic.Int64
	sink := &batchSink{fail: func(int) error { return errSink }}
	var got []*SinkError
	var mu sync.Mutex
	cfg := Config{Capacity: 1024, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		var se *SinkError
		require.ErrorAs(t, err, &se)
		got = append(got, se)
	}}
	b := newTestBus(t, sink, cfg, func(b *Bus) {
		fastRetry(b)
		b.retries = 1
		b.d.now = func() time.Time { return time.Unix(0, clock.Load()) }
	})
	for i := range 5 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
		require.ErrorIs(t, b.Flush(context.Background()), errSink)
	}
	clock.Add(int64(time.Second))
	require.NoError(t, b.Enqueue(payload(9, 10)))
	require.ErrorIs(t, b.Flush(context.Background()), errSink)
	require.NoError(t, b.Close(context.Background()), "nothing failed during Close")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	require.Zero(t, got[0].Suppressed)
	require.EqualValues(t, 4, got[1].Suppressed)
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 6, st.Failed)
}

func TestFlush(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	for i := range 10 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
		require.NoError(t, b.Flush(context.Background()))
		require.Len(t, sink.records(), i+1, "everything before Flush is written")
	}
	sink.mu.Lock()
	require.GreaterOrEqual(t, sink.syncs, 10, "Flush syncs a Syncer")
	sink.mu.Unlock()
	closeBus(t, b)
	require.NoError(t, b.Flush(context.Background()), "Flush after Close")
	requireAccounting(t, b.Stats())
}

func TestFlushHonoursContext(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	require.NoError(t, b.Enqueue(payload(1, 10)))
	<-sink.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Flush(ctx), context.Canceled)
	close(sink.gate)
	closeBus(t, b)
}

func TestCloseHonoursContext(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 4096}, nil)
	require.NoError(t, b.Enqueue(payload(1, 10)))
	<-sink.entered
	for i := range 5 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Close(ctx), context.Canceled)
	// The books are final before Close returns, with the drainer still in
	// the sink's call: the record in that call counts as failed too.
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 0, st.Written)
	require.EqualValues(t, 6, st.Failed)
	close(sink.gate)
	<-b.done // the call returns; the drainer exits and counts nothing more
	after := b.Stats()
	require.Equal(t, [4]uint64{st.Enqueued, st.Written, st.Failed, st.Dropped},
		[4]uint64{after.Enqueued, after.Written, after.Failed, after.Dropped}, "the books stay as Close left them")
}

func TestParkAndWake(t *testing.T) {
	sink := &batchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096, MaxLatency: time.Millisecond}, nil)
	waitFor(t, "drainer parked", func() bool { return b.state.Load() == stParked })
	require.NoError(t, b.Enqueue(payload(1, 10)))
	waitFor(t, "record written without Flush", func() bool { return len(sink.records()) == 1 })
	st := b.Stats()
	require.NotZero(t, st.Parks)
	require.NotZero(t, st.Wakeups)
	closeBus(t, b)
}

func TestAdaptiveBatchTarget(t *testing.T) {
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, sink, Config{Capacity: 1 << 16, minBatch: 4, maxBatch: 256}, nil)
	require.EqualValues(t, 4, b.Stats().BatchTarget)
	require.NoError(t, b.Enqueue(payload(0, 30)))
	<-sink.entered
	for i := range 1500 { // fill past the 75 % watermark behind the blocked sink
		require.NoError(t, b.Enqueue(payload(i, 30)))
	}
	close(sink.gate)
	require.NoError(t, b.Flush(context.Background()))
	require.Equal(t, 256, sink.maxBatch, "past the watermark the drainer switches to MaxBatch")
	require.Less(t, b.Stats().BatchTarget, uint64(256), "and shrinks once the ring is empty")
	closeBus(t, b)
	st := b.Stats()
	requireAccounting(t, st)
	require.GreaterOrEqual(t, st.QueueHighWater, uint64(1500*40))
}

func TestWritevPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	got := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(r)
		got <- data
	}()
	b := newTestBus(t, w, Config{Capacity: 1 << 14}, nil)
	require.Equal(t, sinkWritev, b.sink)
	var want bytes.Buffer
	for i := range 20000 {
		p := payload(i, 1+i%200)
		require.NoError(t, b.Enqueue(p))
		want.Write(p)
	}
	closeBus(t, b)
	require.NoError(t, w.Close())
	require.Equal(t, want.Bytes(), <-got)
	require.NoError(t, r.Close())
	st := b.Stats()
	requireAccounting(t, st)
	require.Less(t, st.WriteCalls, st.Written/4)
}

// TestConfigValidation: the root package validates options, so the bus
// panics on a value validation should have excluded (programmer error).
func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		w    io.Writer
		cfg  Config
		msg  string
	}{
		{"nil writer", nil, Config{}, "nil writer"},
		{"no marker", io.Discard, Config{DropMarker: nil}, "DropMarker"},
		{"negative capacity", io.Discard, Config{Capacity: -1}, "Capacity"},
		{"huge capacity", io.Discard, Config{Capacity: MaxCapacity + 1}, "Capacity"},
		{"memory too small", io.Discard, Config{Capacity: 1024, memory: make([]byte, 512)}, "memory holds"},
		{"tiny memory", io.Discard, Config{memory: make([]byte, 8)}, "memory holds"},
		{"ring file and memory", io.Discard, Config{RingFile: "x", memory: make([]byte, 4096)}, "exclusive"},
		{"negative maxRecord", io.Discard, Config{maxRecord: -1}, "maxRecord"},
		{"maxRecord too big", io.Discard, Config{Capacity: 1024, maxRecord: 600}, "maxRecord"},
		{"bad overflow", io.Discard, Config{Overflow: 7}, "invalid Overflow"},
		{"negative timeout", io.Discard, Config{BlockTimeout: -1}, "BlockTimeout"},
		{"negative latency", io.Discard, Config{MaxLatency: -1}, "MaxLatency"},
		{"watermark > 1", io.Discard, Config{HighWatermark: 1.5}, "HighWatermark"},
		{"watermark < 0", io.Discard, Config{HighWatermark: -0.1}, "HighWatermark"},
		{"batch order", io.Discard, Config{minBatch: 100, maxBatch: 10}, "minBatch"},
		{"negative batch", io.Discard, Config{minBatch: -1}, "minBatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if tc.name != "no marker" {
				cfg = withMarker(cfg)
			}
			defer func() {
				r := recover()
				require.NotNil(t, r, "New must panic")
				require.Contains(t, fmt.Sprint(r), tc.msg)
			}()
			_, _ = New(tc.w, cfg)
		})
	}

	t.Run("defaults", func(t *testing.T) {
		b, err := testNew(io.Discard, Config{Capacity: 1000})
		require.NoError(t, err)
		require.EqualValues(t, 1024, b.capacity)
		require.Equal(t, 128, b.maxRecord)
		require.Equal(t, DefaultMaxLatency, b.maxLatency)
		require.EqualValues(t, 768, b.hwBytes)
		require.Equal(t, DefaultMinBatch, b.minBatch)
		require.Equal(t, 1024/hdrSize, b.maxBatch, "a 1 KiB ring holds at most 128 entries: MaxBatch is clamped to that")
		closeBus(t, b)
		b, err = testNew(io.Discard, Config{})
		require.NoError(t, err)
		require.EqualValues(t, DefaultCapacity, b.Stats().Capacity)
		require.Equal(t, DefaultMaxBatch, b.maxBatch)
		closeBus(t, b)
	})
}

func TestOverflowString(t *testing.T) {
	for o, s := range map[Overflow]string{Block: "Block", Drop: "Drop", 9: "Overflow(9)"} {
		require.Equal(t, s, o.String())
	}
}

func TestSinkErrorText(t *testing.T) {
	err := &SinkError{Op: "write", Output: "/var/log/app.log", Err: errSink, Failed: 3, Suppressed: 2}
	require.Equal(t, "asyncbus: write /var/log/app.log: sink broken (3 records failed) (2 similar errors suppressed)", err.Error())
	require.ErrorIs(t, err, errSink)
}

func TestEnqueueZeroAllocs(t *testing.T) {
	b := newTestBus(t, io.Discard, Config{Capacity: 1 << 20}, nil)
	p := payload(0, 200)
	allocs := testing.AllocsPerRun(1000, func() { _ = b.Enqueue(p) })
	require.Zero(t, allocs)
	closeBus(t, b)
}
