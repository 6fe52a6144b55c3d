package bus

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withRoom(line string) []byte { return append(make([]byte, SeqRoom), line...) }

const testRun = "0123456789abcdef"

// numbered is the line a record gets with number n (SeqKV).
func numbered(n int, line []byte) []byte {
	return append([]byte("seq="+strconv.Itoa(n)+" run="+testRun+" "), line...)
}

// A write that fails or writes short, with records that wait quietly for
// their write: a record keeps the number it was collected with (a retry
// does not number it again); the output is whole and in order.
func TestSeqFailureKeepsNumbers(t *testing.T) {
	for _, tc := range []struct {
		name string
		sink *streamSink
	}{
		{"error", &streamSink{failAt: map[int]bool{1: true, 3: true}}},
		{"short", &streamSink{maxWrite: 7}},
		{"fine", &streamSink{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBus(t, tc.sink, Config{QuietWait: true, Sequence: SeqKV, RunID: testRun}, fastRetry)
			var want [][]byte
			for i := range 5 {
				p := payload(i, 30)
				want = append(want, numbered(i+1, p))
				require.NoError(t, b.Enqueue(withRoom(string(p))))
			}
			closeBus(t, b)
			assert.Equal(t, want, splitLines(tc.sink.bytes()))
			st := b.Stats()
			requireAccounting(t, st)
			assert.EqualValues(t, 5, st.Written)
		})
	}
}

// Producers racing, some of their records waiting quietly: the numbers
// are 1..N in output order, and each producer's records keep their order.
func TestSeqStressNumbersInOutputOrder(t *testing.T) {
	const producers, each = 8, 2000
	sink := &streamSink{}
	b := newTestBus(t, sink, Config{QuietWait: true, Capacity: 64 << 10, Sequence: SeqKV, RunID: testRun}, nil)
	enqueueFrom(t, b, producers, each, func(p, i int) string { return fmt.Sprintf("p=%d i=%d\n", p, i) })
	closeBus(t, b)
	lines := splitLines(sink.bytes())
	require.Len(t, lines, producers*each)
	next := make([]int, producers)
	for n, line := range lines {
		var seq, p, i int
		var run string
		_, err := fmt.Sscanf(string(line), "seq=%d run=%s p=%d i=%d\n", &seq, &run, &p, &i)
		require.NoError(t, err, "%q", line)
		require.Equal(t, n+1, seq, "%q", line)
		require.Equal(t, testRun, run)
		require.Equal(t, next[p], i, "producer %d in order", p)
		next[p]++
	}
}

// enqueueFrom enqueues each records from each of producers goroutines,
// record i of producer p being line(p, i) behind SeqRoom bytes of room,
// and returns when all are in.
func enqueueFrom(t *testing.T, b *Bus, producers, each int, line func(p, i int) string) {
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if err := b.Enqueue(withRoom(line(p, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
