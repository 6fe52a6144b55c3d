package seqnum

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func withRoom(line string) []byte { return append(make([]byte, Room), line...) }

const testRun = "0123456789abcdef"

func TestSeqNumber(t *testing.T) {
	run := strings.Repeat("ab", RunIDLen/2)
	for _, tc := range []struct {
		name   string
		format Format
		next   uint64
		line   string
		want   string
	}{
		{"json", JSON, 1, `{"msg":"x"}` + "\n", `{"seq":1,"run":"` + run + `","msg":"x"}` + "\n"},
		{"json empty object", JSON, 7, "{}\n", `{"seq":7,"run":"` + run + `"}` + "\n"},
		{"json largest number", JSON, 1<<64 - 1, `{"a":1}`, `{"seq":18446744073709551615,"run":"` + run + `","a":1}`},
		{"json format, not an object", JSON, 3, "plain\n", "seq=3 run=" + run + " plain\n"},
		{"kv", KV, 42, "time=t msg=x\n", "seq=42 run=" + run + " time=t msg=x\n"},
		{"kv empty", KV, 1, "", "seq=1 run=" + run + " "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := State{Format: tc.format, Run: run, Next: tc.next}
			assert.Equal(t, tc.want, string(s.Number(withRoom(tc.line))))
			assert.Equal(t, tc.next+1, s.Next)
		})
	}
}

func TestSeqMarkerTakesTheLostNumbers(t *testing.T) {
	run := strings.Repeat("01", RunIDLen/2)
	s := State{Format: JSON, Run: run, Next: 10}
	got := s.Marker(nil, []byte(`{"msg":"asyncbus: records dropped","dropped":5}`+"\n"), 5)
	assert.Equal(t, `{"drop_seq":10,"run":"`+run+`","drop_count":5,"msg":"asyncbus: records dropped","dropped":5}`+"\n", string(got))
	assert.EqualValues(t, 15, s.Next, "the next record follows the five lost")

	k := State{Format: KV, Run: run, Next: 1}
	assert.Equal(t, "drop_seq=1 run="+run+" drop_count=2 msg=dropped dropped=2\n", string(k.Marker(nil, []byte("msg=dropped dropped=2\n"), 2)))
	assert.EqualValues(t, 3, k.Next)
}

// A drop marker opens with a key no record's line opens with: a record
// worded like a marker still starts with its number.
func TestSeqMarkerCannotBeForgedByARecord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		line   string
		want   string // the marker's start
	}{
		{"json", JSON, `{"msg":"asyncbus: records dropped","dropped":3}` + "\n", `{"drop_seq":1,"run":"` + testRun + `","drop_count":3,"msg"`},
		{"json empty object", JSON, "{}\n", `{"drop_seq":1,"run":"` + testRun + `","drop_count":3}` + "\n"},
		{"kv", KV, `msg="asyncbus: records dropped" dropped=3` + "\n", "drop_seq=1 run=" + testRun + " drop_count=3 msg="},
		{"json format, not an object", JSON, "plain\n", "drop_seq=1 run=" + testRun + " drop_count=3 plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := State{Format: tc.format, Run: testRun, Next: 1}
			numbered := string(rec.Number(withRoom(tc.line)))
			mark := State{Format: tc.format, Run: testRun, Next: 1}
			marker := string(mark.Marker(nil, []byte(tc.line), 3))
			assert.True(t, strings.HasPrefix(marker, tc.want), marker)
			assert.True(t, strings.HasPrefix(numbered, `{"seq":`) || strings.HasPrefix(numbered, "seq="), numbered)
			assert.NotEqual(t, numbered[:3], marker[:3], "a record and a marker open differently")
		})
	}
}

func TestNewRunIDIsRandomHex(t *testing.T) {
	a, b := NewRunID(), NewRunID()
	assert.Len(t, a, RunIDLen)
	assert.NotEqual(t, a, b)
	for _, c := range a {
		assert.True(t, c >= '0' && c <= '9' || c >= 'a' && c <= 'f', a)
	}
}

func TestSeqRunEnd(t *testing.T) {
	run := strings.Repeat("ab", RunIDLen/2)
	req := func() []byte { return withRoom(RunEndSentinel + strings.Repeat(" ", RunEndRoom)) }
	for _, tc := range []struct {
		format Format
		next   uint64
		want   string
	}{
		{JSON, 8, `{"run_end":"` + run + `","count":7,"msg":"asyncbus: run ended"}` + "\n"},
		{JSON, 1<<64 - 1, `{"run_end":"` + run + `","count":18446744073709551614,"msg":"asyncbus: run ended"}` + "\n"},
		{KV, 1, "run_end=" + run + ` count=0 msg="asyncbus: run ended"` + "\n"},
	} {
		s := State{Format: tc.format, Run: run, Next: tc.next}
		rec := req()
		assert.Equal(t, tc.want, string(s.Number(rec)))
		assert.Equal(t, tc.next, s.Next, "the end takes no number")
		assert.True(t, isRunEnd(rec[Room:]), "the sentinel stays for a replay")
	}
	s := State{Format: JSON, Run: run, Next: 1}
	assert.Equal(t, `{"seq":1,"run":"`+run+`",`+"\x00x", string(s.Number(withRoom("{\x00x"))), "a short or other line is a record")
}
