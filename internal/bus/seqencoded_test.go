package bus

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tagEncode is a SeqEncode for records that open with the tag 'R': it
// replaces the tag with "R<seq>/<run>|"; other records are not its own.
func tagEncode(dst, rec []byte, seq uint64, run string) ([]byte, int) {
	if len(rec) == 0 || rec[0] != 'R' {
		return nil, 0
	}
	dst = append(dst, 'R')
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(append(append(dst, '/'), run...), '|')
	return dst, 1
}

// Producers racing with an encoder's numbers: 1..N in output order.
func TestSeqEncodedStressNumbersInOutputOrder(t *testing.T) {
	const producers, each = 4, 1000
	sink := &streamSink{}
	b := newTestBus(t, sink, Config{QuietWait: true, Capacity: 64 << 10, Sequence: SeqEncoded, SeqEncode: tagEncode, RunID: testRun}, nil)
	enqueueFrom(t, b, producers, each, func(p, i int) string { return "Rp=" + strconv.Itoa(p) + " i=" + strconv.Itoa(i) + "\n" })
	closeBus(t, b)
	lines := splitLines(sink.bytes())
	require.Len(t, lines, producers*each)
	next := make([]int, producers)
	for n, line := range lines {
		head, rest, ok := strings.Cut(string(line), "|")
		require.True(t, ok, "%q", line)
		require.Equal(t, "R"+strconv.Itoa(n+1)+"/"+testRun, head)
		var p, i int
		_, err := fmt.Sscanf(rest, "p=%d i=%d\n", &p, &i)
		require.NoError(t, err, "%q", line)
		require.Equal(t, next[p], i, "producer %d in order", p)
		next[p]++
	}
}
