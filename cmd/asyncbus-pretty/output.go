package main

import (
	"bufio"
	"errors"
	"io"
)

// output writes the printer's lines through a buffer, flushed whenever
// the input has nothing more buffered, so that a live stream shows at once.
type output struct {
	p   *printer
	w   *bufio.Writer
	buf []byte
}

func newOutput(p *printer, w io.Writer) *output {
	return &output{p: p, w: bufio.NewWriterSize(w, 64<<10)}
}

// line prints one input line.
func (o *output) line(b []byte) error {
	o.buf = o.p.appendLine(o.buf[:0], b)
	_, err := o.w.Write(o.buf)
	return err
}

// drain prints lr's complete lines up to the end of its input, flushing
// when lr has nothing more buffered; io.EOF is the normal end.
func (o *output) drain(lr *lineReader) error {
	for {
		b, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := o.line(b); err != nil {
			return err
		}
		if lr.r.Buffered() == 0 {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
}

// endOfFile prints the unterminated last line lr holds, if any, as a line.
func (o *output) endOfFile(lr *lineReader) error {
	if b, ok := lr.rest(); ok {
		return o.line(b)
	}
	return nil
}

func (o *output) flush() error { return o.w.Flush() }
