//go:build !linux

package bus

import "io"

const iovMax = 1024

var useWritev = false

// writevRegular: see writev_linux.go (no writev here).
var writevRegular = false

func detectOutputKind(w io.Writer) outputKind {
	if _, ok := w.(BatchWriter); ok {
		return outputBatch
	}
	return outputCopy
}

type writevState struct{}

func (s *writevState) init(io.Writer) {}

func (s *writevState) step(d *drainer, idx, off int) (int, int, error) {
	return idx, off, nil
}
