//go:build !linux

package writev

import "io"

// Max is the most views one Write takes.
const Max = 1024

// Writer is not available here: New returns nil.
type Writer struct{}

// New returns nil: no writev here.
func New(io.Writer) *Writer { return nil }

// Write is never called: New returns nil.
func (s *Writer) Write(views [][]byte, idx, off int) (int, int, bool, error) {
	return idx, off, false, nil
}
