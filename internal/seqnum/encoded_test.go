package seqnum

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tagEncode is a Encode for records that open with the tag 'R': it
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

func TestEncodedNumbersInPlace(t *testing.T) {
	run := strings.Repeat("cd", RunIDLen/2)
	var reported []error
	s := State{Format: Encoded, Run: run, Next: 41, Enc: Encoder{Fn: tagEncode, Report: func(err error) bool {
		reported = append(reported, err)
		return true
	}}}
	assert.Equal(t, "R41/"+run+"|hello\n", string(s.Number(withRoom("Rhello\n"))))
	assert.Equal(t, "not ours\n", string(s.Number(withRoom("not ours\n"))), "a record the encoder does not recognise")
	assert.Equal(t, "R42/"+run+"|again\n", string(s.Number(withRoom("Ragain\n"))), "the unrecognised record took no number")
	assert.EqualValues(t, 43, s.Next)
	assert.Empty(t, reported)
}

func TestEncodedFaultsLeaveTheRecordUnnumbered(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   Encode
		want string // in the report
	}{
		{"head longer than the room", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) {
			return append(dst, make([]byte, Room+2)...), 1
		}, "1 more than the 64 bytes of room"},
		{"skip past the record", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) { return append(dst, 'x'), 99 }, "replaced 99 bytes of a 7-byte record"},
		{"negative skip", func(dst, _ []byte, _ uint64, _ string) ([]byte, int) { return append(dst, 'x'), -1 }, "replaced -1 bytes"},
		{"panic", func([]byte, []byte, uint64, string) ([]byte, int) { panic("boom") }, "AppendSequence panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reported []error
			s := State{Format: Encoded, Run: testRun, Next: 1, Enc: Encoder{Fn: tc.fn, Report: func(err error) bool {
				reported = append(reported, err)
				return true
			}}}
			long := "R" + strings.Repeat("x", 20) + "\n"
			assert.Equal(t, "Rhello\n", string(s.Number(withRoom("Rhello\n"))))
			assert.Equal(t, long, string(s.Number(withRoom(long))))
			assert.EqualValues(t, 1, s.Next, "no number taken")
			require.Len(t, reported, 1, "reported once")
			assert.Contains(t, reported[0].Error(), tc.want)
			assert.Contains(t, reported[0].Error(), "written without a number")
		})
	}
}

func TestEncodedMarkerTakesTheLostNumbers(t *testing.T) {
	s := State{Format: Encoded, Run: testRun, Next: 7, Enc: Encoder{Fn: tagEncode}}
	got := s.Marker([]byte("old"), []byte("Rdropped=3\n"), 3)
	assert.Equal(t, "R7/"+testRun+"|dropped=3\n", string(got))
	assert.EqualValues(t, 10, s.Next)
	got = s.Marker(got, []byte("text marker dropped=2\n"), 2)
	assert.Equal(t, "text marker dropped=2\n", string(got), "a marker the encoder does not recognise goes as it is")
	assert.EqualValues(t, 12, s.Next, "its numbers are taken all the same")
}
