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
	// open says the last line written was an input's unterminated last
	// line, passed through without a '\n': one is written before any
	// further output, so that lines never run together.
	open bool
}

func newOutput(p *printer, w io.Writer) *output {
	return &output{p: p, w: bufio.NewWriterSize(w, 64<<10)}
}

// line prints one input line, which ended in '\n' if terminated. An
// unterminated line passed through unchanged (not a record) is written
// without a '\n', byte for byte; a record always ends its line.
func (o *output) line(b []byte, terminated bool) error {
	o.buf = o.p.appendLine(o.buf[:0], b)
	if len(o.buf) == 0 {
		return nil
	}
	if o.open {
		if err := o.w.WriteByte('\n'); err != nil {
			return err
		}
		o.open = false
	}
	out := o.buf
	if !terminated && len(out) == len(b)+1 && string(out[:len(b)]) == string(b) {
		out, o.open = out[:len(b)], true
	}
	_, err := o.w.Write(out)
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
		if err := o.line(b, true); err != nil {
			return err
		}
		if lr.r.Buffered() == 0 {
			if err := o.flush(); err != nil {
				return err
			}
		}
	}
}

// endOfFile prints the unterminated last line lr holds, if any.
func (o *output) endOfFile(lr *lineReader) error {
	if b, ok := lr.rest(); ok {
		return o.line(b, false)
	}
	return nil
}

func (o *output) flush() error { return o.w.Flush() }
