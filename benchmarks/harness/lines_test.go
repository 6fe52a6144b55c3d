package harness

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func jsonLine(seq int) string {
	return fmt.Sprintf(`{"time":"2026-11-30T00:00:00Z","level":"INFO","msg":"request handled","method":"GET","status":200,"seq":%d}`, seq)
}

func textLine(seq int) string {
	return fmt.Sprintf(`time=2026-11-30T00:00:00Z level=INFO msg="request handled" method=GET status=200 seq=%d`, seq)
}

func TestCountLines(t *testing.T) {
	tests := []struct {
		name       string
		n, g       int
		lines      []string
		noFinalNL  bool
		want       LineCount
		lost       int64
		unaccount  int64
		verifiedOK bool
	}{
		{
			name: "json all present, two goroutines", n: 4, g: 2,
			lines: []string{jsonLine(0), jsonLine(SeqStride + 1), jsonLine(1), jsonLine(SeqStride)},
			want:  LineCount{Lines: 4, Unique: 4}, verifiedOK: true,
		},
		{
			name: "text with uneven split", n: 3, g: 2,
			lines: []string{textLine(0), textLine(1), textLine(SeqStride)},
			want:  LineCount{Lines: 3, Unique: 3}, verifiedOK: true,
		},
		{
			name: "one lost", n: 3, g: 1,
			lines: []string{jsonLine(0), jsonLine(2)},
			want:  LineCount{Lines: 2, Unique: 2}, lost: 1, unaccount: 1, verifiedOK: true,
		},
		{
			name: "duplicate and out-of-range", n: 3, g: 1,
			lines: []string{jsonLine(0), jsonLine(0), jsonLine(3), jsonLine(SeqStride)},
			want:  LineCount{Lines: 4, Unique: 1, Duplicates: 1, Unparsed: 2}, lost: -1, unaccount: -1,
		},
		{
			name: "json drop markers account for the rest", n: 5, g: 1,
			lines: []string{jsonLine(0), `{"time":"x","level":"WARN","msg":"asyncbus: records dropped","dropped":3}`, jsonLine(4),
				`{"level":"WARN","msg":"asyncbus: records dropped","dropped":0}`},
			want: LineCount{Lines: 2, Unique: 2, Markers: 2, MarkerDropped: 3}, lost: 3, verifiedOK: true,
		},
		{
			name: "text drop marker", n: 2, g: 1,
			lines: []string{textLine(1), `time=x level=WARN msg="asyncbus: records dropped" dropped=1`},
			want:  LineCount{Lines: 1, Unique: 1, Markers: 1, MarkerDropped: 1}, lost: 1, verifiedOK: true,
		},
		{
			name: "marker without a count", n: 1, g: 1,
			lines: []string{jsonLine(0), `{"msg":"asyncbus: records dropped","dropped":"many"}`},
			want:  LineCount{Lines: 1, Unique: 1, Markers: 1, BadMarkers: 1},
		},
		{
			name: "torn last line without newline", n: 2, g: 1, noFinalNL: true,
			lines: []string{jsonLine(0), `{"time":"2026","msg":"request han`},
			want:  LineCount{Lines: 2, Unique: 1, Unparsed: 1},
		},
		{
			name: "blank and CRLF lines", n: 1, g: 1,
			lines: []string{"", textLine(0) + "\r", "   "},
			want:  LineCount{Lines: 1, Unique: 1}, verifiedOK: true,
		},
		{
			name: "key must be whole", n: 1, g: 1,
			lines: []string{`xseq=0 other=1`},
			want:  LineCount{Lines: 1, Unparsed: 1}, lost: 0,
		},
		{
			name: "empty file", n: 2, g: 2,
			want: LineCount{}, lost: 2, unaccount: 2, verifiedOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Join(tt.lines, "\n")
			if len(tt.lines) > 0 && !tt.noFinalNL {
				text += "\n"
			}
			tt.want.Bytes = int64(len(text))
			got, err := CountLines(strings.NewReader(text), tt.n, tt.g)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.verifiedOK, got.Verified())
			lost := int64(tt.n) - got.Lines
			assert.Equal(t, tt.lost, lost, "lost")
			assert.Equal(t, tt.unaccount, lost-int64(got.MarkerDropped), "unaccounted")
		})
	}
}

func TestCountLinesErrors(t *testing.T) {
	_, err := CountLines(strings.NewReader(""), 1, 0)
	require.Error(t, err)
	_, err = CountLines(strings.NewReader(""), -1, 1)
	require.Error(t, err)
	long := strings.Repeat("a", maxLine+10)
	_, err = CountLines(strings.NewReader(long), 1, 1)
	require.ErrorIs(t, err, bufio.ErrTooLong)
	_, err = CountLines(iotestErrReader{}, 1, 1)
	require.ErrorContains(t, err, "boom")
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestIntAttr(t *testing.T) {
	tests := []struct {
		line, key string
		want      uint64
		ok        bool
	}{
		{`{"seq":12}`, "seq", 12, true},
		{`{"a":1,"seq":3000000007,"b":2}`, "seq", 3000000007, true},
		{`seq=5`, "seq", 5, true},
		{`a=1 seq=5 b=2`, "seq", 5, true},
		{"a=1\tseq=5", "seq", 5, true},
		{`a=1 xseq=5`, "seq", 0, false},
		{`xseq=5 seq=6`, "seq", 6, true},
		{`seq=5x`, "seq", 0, false},
		{`seq=-5`, "seq", 0, false},
		{`seq=`, "seq", 0, false},
		{`seq=99999999999999999999`, "seq", 0, false},
		{`msg="asyncbus: records dropped" dropped=7`, "dropped", 7, true},
		{`{"msg":"asyncbus: records dropped","dropped":7}`, "dropped", 7, true},
		{`nothing here`, "seq", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			v, ok := intAttr([]byte(tt.line), tt.key)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, v)
		})
	}
}
