//go:build unix && !linux

package filesink

import "golang.org/x/sys/unix"

// writevFD writes the slices one write(2) at a time (no portable writev in
// x/sys here); it stops at the first short write or error.
func writevFD(fd handle, iovs [][]byte) (int, error) {
	total := 0
	for _, b := range iovs {
		n, err := unix.Write(fd, b)
		total += max(n, 0)
		if err != nil || n < len(b) {
			return total, err
		}
	}
	return total, nil
}

// newWritev returns the write function of a new File.
func newWritev() func(fd handle, bufs [][]byte) (int, error) { return writevFD }

// datasync falls back to fsync(2).
func datasync(fd int) error { return unix.Fsync(fd) }

// preallocate is unsupported: the first write disables it.
func preallocate(int, int64, int64) error { return unix.ENOTSUP }

// preallocUnsupported reports whether a preallocate error means the file
// system cannot preallocate at all (rather than, say, being out of space).
func preallocUnsupported(err error) bool {
	return err == unix.ENOTSUP || err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL
}

// truncateFD is ftruncate(2).
func truncateFD(fd int, size int64) error { return unix.Ftruncate(fd, size) }
