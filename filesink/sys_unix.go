//go:build unix

package filesink

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// handle is how the system calls below name an open file: a descriptor.
type handle = int

// handleOf returns file's descriptor; Fd also puts it in blocking mode,
// which the writes below expect.
func handleOf(file *os.File) handle { return int(file.Fd()) }

// appendEnd returns the offset just after the bytes the last write appended:
// the descriptor's offset, which O_APPEND leaves there.
func appendEnd(h handle, _ *os.File) (int64, error) { return unix.Seek(h, 0, io.SeekCurrent) }

// renameOpenFails is false: a file can be renamed while it is open.
const renameOpenFails = false
