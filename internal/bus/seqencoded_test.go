package bus

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
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

// reports collects OnError's errors.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *reports) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func TestSeqEncodedNumbersInPlace(t *testing.T) {
	run := strings.Repeat("cd", RunIDLen/2)
	var reported []error
	s := seqState{format: SeqEncoded, run: run, next: 41, enc: seqEncoder{fn: tagEncode, report: func(err error) bool {
		reported = append(reported, err)
		return true
	}}}
	assert.Equal(t, "R41/"+run+"|hello\n", string(s.number(withRoom("Rhello\n"))))
	assert.Equal(t, "not ours\n", string(s.number(withRoom("not ours\n"))), "a record the encoder does not recognise")
	assert.Equal(t, "R42/"+run+"|again\n", string(s.number(withRoom("Ragain\n"))), "the unrecognised record took no number")
	assert.EqualValues(t, 43, s.next)
	assert.Empty(t, reported)
}

func TestSeqEncodedFaultsLeaveTheRecordUnnumbered(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   SeqEncode
		want string // in the report
	}{
		{"head longer than the room", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) {
			return append(dst, make([]byte, SeqRoom+2)...), 1
		}, "1 more than the 64 bytes of room"},
		{"skip past the record", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) { return append(dst, 'x'), 99 }, "replaced 99 bytes of a 7-byte record"},
		{"negative skip", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) { return append(dst, 'x'), -1 }, "replaced -1 bytes"},
		{"panic", func([]byte, []byte, uint64, string) ([]byte, int) { panic("boom") }, "AppendSequence panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reported []error
			s := seqState{format: SeqEncoded, run: testRun, next: 1, enc: seqEncoder{fn: tc.fn, report: func(err error) bool {
				reported = append(reported, err)
				return true
			}}}
			long := "R" + strings.Repeat("x", 20) + "\n"
			assert.Equal(t, "Rhello\n", string(s.number(withRoom("Rhello\n"))))
			assert.Equal(t, long, string(s.number(withRoom(long))))
			assert.EqualValues(t, 1, s.next, "no number taken")
			require.Len(t, reported, 1, "reported once")
			assert.Contains(t, reported[0].Error(), tc.want)
			assert.Contains(t, reported[0].Error(), "written without a number")
		})
	}
}

func TestSeqEncodedMarkerTakesTheLostNumbers(t *testing.T) {
	s := seqState{format: SeqEncoded, run: testRun, next: 7, enc: seqEncoder{fn: tagEncode}}
	got := s.marker([]byte("old"), []byte("Rdropped=3\n"), 3)
	assert.Equal(t, "R7/"+testRun+"|dropped=3\n", string(got))
	assert.EqualValues(t, 10, s.next)
	got = s.marker(got, []byte("text marker dropped=2\n"), 2)
	assert.Equal(t, "text marker dropped=2\n", string(got), "a marker the encoder does not recognise goes as it is")
	assert.EqualValues(t, 12, s.next, "its numbers are taken all the same")
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
