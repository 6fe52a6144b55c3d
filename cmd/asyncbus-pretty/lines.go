package main

import (
	"bufio"
	"errors"
	"io"
)

// lineReader reads lines of any length: a line longer than the buffer is
// gathered from successive ReadSlice calls, with no token limit.
type lineReader struct {
	r       *bufio.Reader
	partial []byte // the start of a line not yet ended by '\n'
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next complete line without its '\n', valid until the
// next call. At the end of the input (io.EOF, or another read error) it
// returns the error and keeps any unterminated tail, which a later call
// completes if the input grows (following a file) and rest returns.
func (lr *lineReader) next() ([]byte, error) {
	for {
		b, err := lr.r.ReadSlice('\n')
		switch {
		case err == nil:
			if len(lr.partial) > 0 {
				lr.partial = append(lr.partial, b[:len(b)-1]...)
				line := lr.partial
				lr.partial = lr.partial[:0]
				return line, nil
			}
			return b[:len(b)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			lr.partial = append(lr.partial, b...)
		default:
			lr.partial = append(lr.partial, b...)
			return nil, err
		}
	}
}

// rest returns the unterminated last line, if any, and forgets it.
func (lr *lineReader) rest() ([]byte, bool) {
	line := lr.partial
	lr.partial = lr.partial[:0]
	return line, len(line) > 0
}

// reset makes lr read from r, keeping nothing buffered but the partial line.
func (lr *lineReader) reset(r io.Reader) { lr.r.Reset(r) }
