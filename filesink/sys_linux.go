//go:build linux

package filesink

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// vecWriter issues writev(2) from a reused iovec array. unix.Writev would
// allocate and grow a new array on every call (5 allocations for a batch of
// 256), which is the whole allocation cost of a batch.
type vecWriter struct{ vec []unix.Iovec }

// writev writes bufs (at most iovMax of them) with one writev(2) call.
func (w *vecWriter) writev(fd int, bufs [][]byte) (int, error) {
	vec := w.vec[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue // &b[0] does not exist; the kernel would skip it anyway
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		vec = append(vec, v)
	}
	w.vec = vec
	if len(vec) == 0 {
		return 0, nil
	}
	// unsafe: the only way to pass the iovec array to the system call. The
	// conversion to uintptr happens in the call expression, so the array (and,
	// through its Base pointers, every buffer) stays alive and unmoved for the
	// duration of the call, as unsafe.Pointer rule 4 requires. Covered by every
	// write test and by the race-enabled runs.
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&vec[0])), uintptr(len(vec)))
	clear(vec) // drop the references to the caller's buffers
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// writevFD is a one-off writev (tests and error paths).
func writevFD(fd handle, bufs [][]byte) (int, error) {
	var w vecWriter
	return w.writev(fd, bufs)
}

// newWritev returns the write function of a new File.
func newWritev() func(fd handle, bufs [][]byte) (int, error) {
	w := &vecWriter{vec: make([]unix.Iovec, 0, 64)}
	return w.writev
}

// datasync is fdatasync(2): data and the metadata needed to read it back.
func datasync(fd int) error { return unix.Fdatasync(fd) }

// preallocate reserves [off, off+n) without changing the file size, so
// O_APPEND writes keep landing at the real end and a crash leaves no zeros.
func preallocate(fd int, off, n int64) error {
	return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, n)
}

// preallocUnsupported reports whether a preallocate error means the file
// system cannot preallocate at all (rather than, say, being out of space).
func preallocUnsupported(err error) bool {
	return err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL
}

// truncateFD is ftruncate(2); truncating to the current size also releases
// blocks preallocated beyond it.
func truncateFD(fd int, size int64) error { return unix.Ftruncate(fd, size) }
