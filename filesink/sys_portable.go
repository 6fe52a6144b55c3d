//go:build !unix

package filesink

import (
	"errors"
	"io"
	"os"
)

// handle is how the system calls below name an open file. Without Unix
// descriptors (Windows, js, wasip1, plan9) the portable *os.File methods
// do the work.
type handle = *os.File

// handleOf returns file itself.
func handleOf(file *os.File) handle { return file }

// writevFD writes the slices one Write at a time; it stops at the first short
// write or error.
func writevFD(h handle, iovs [][]byte) (int, error) {
	total := 0
	for _, b := range iovs {
		n, err := h.Write(b)
		total += max(n, 0)
		if err != nil || n < len(b) {
			if err == nil {
				err = io.ErrShortWrite
			}
			return total, err
		}
	}
	return total, nil
}

// newWritev returns the write function of a new File.
func newWritev() func(h handle, bufs [][]byte) (int, error) { return writevFD }

// datasync is File.Sync (FlushFileBuffers on Windows).
func datasync(h handle) error { return h.Sync() }

// errPreallocUnsupported is preallocate's answer: no portable way to reserve
// blocks without changing the file size.
var errPreallocUnsupported = errors.New("no preallocation without changing the file size on this system")

// preallocate is unsupported: the first attempt reports it and turns it off.
func preallocate(handle, int64, int64) error { return errPreallocUnsupported }

// preallocUnsupported reports whether a preallocate error means the file
// system cannot preallocate at all.
func preallocUnsupported(err error) bool { return errors.Is(err, errPreallocUnsupported) }

// truncateFD sets the file's size (through a second handle where the
// O_APPEND handle may not, as on Windows).
func truncateFD(h handle, size int64) error { return truncateReopening(h, size) }

// appendEnd returns the offset just after the bytes the last write appended:
// the file's size. (An append-only handle's offset is not reliable here.)
// Unlike the Unix descriptor offset, it cannot tell another program's append
// made in the same instant from this File's own bytes.
func appendEnd(_ handle, file *os.File) (int64, error) {
	fi, err := file.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// renameOpenFails: Windows cannot rename a file this process has open
// (os.OpenFile does not share delete access); js, wasip1 and plan9 are
// treated the same way, the safe order everywhere.
const renameOpenFails = true
