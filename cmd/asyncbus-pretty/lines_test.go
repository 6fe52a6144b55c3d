package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of lines.go: lines of any length, in any chunking, and the last
// line without its newline.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // far beyond the 64 KiB buffer and bufio.Scanner's limit
	for _, tc := range []struct {
		name  string
		input string
		want  []string
		rest  string
	}{
		{"empty", "", nil, ""},
		{"lines", "a\nb\n", []string{"a", "b"}, ""},
		{"unterminated", "a\nb", []string{"a"}, "b"},
		{"empty lines", "\n\n", []string{"", ""}, ""},
		{"long line", "a\n" + long + "\nb\n", []string{"a", long, "b"}, ""},
		{"long unterminated", long, nil, long},
		{"CR kept", "a\r\n", []string{"a\r"}, ""},
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tc.input)
				if chunked {
					r = iotest.HalfReader(iotest.OneByteReader(r))
				}
				lr := newLineReader(r)
				var got []string
				for {
					b, err := lr.next()
					if err != nil {
						require.True(t, errors.Is(err, io.EOF), err)
						break
					}
					got = append(got, string(b))
				}
				assert.Equal(t, tc.want, got)
				rest, ok := lr.rest()
				assert.Equal(t, tc.rest != "", ok)
				assert.Equal(t, tc.rest, string(rest))
			})
		}
	}
}

// TestLineReaderResumes: a line cut by the end of the input is completed
// when the input grows (following a file).
func TestLineReaderResumes(t *testing.T) {
	var src growing
	lr := newLineReader(&src)
	src.data = "par"
	_, err := lr.next()
	require.ErrorIs(t, err, io.EOF)
	src.data += "tial\nnext\n"
	b, err := lr.next()
	require.NoError(t, err)
	assert.Equal(t, "partial", string(b))
	b, err = lr.next()
	require.NoError(t, err)
	assert.Equal(t, "next", string(b))
}

// growing is a reader over data that may grow after it reported io.EOF.
type growing struct {
	data string
	off  int
}

func (g *growing) Read(p []byte) (int, error) {
	if g.off == len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:])
	g.off += n
	return n, nil
}
