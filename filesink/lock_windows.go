//go:build windows

package filesink

import (
	"errors"

	"golang.org/x/sys/windows"
)

// lockOffset is where the one-byte lock region starts: far past any size a
// log file reaches. Windows byte-range locks are mandatory, so a lock on the
// file's own bytes would make other programs' reads of them (tail, an agent)
// fail; a region beyond the end blocks nobody's reads or appends.
const lockOffset = 1<<63 - 2

// lockFD takes an exclusive LockFileEx lock on one byte at lockOffset
// without waiting. Like flock, the lock belongs to the handle: a second File
// in the same process conflicts too, and the system drops it when the handle
// is closed or the process dies. It returns errLockHeld when another handle
// holds the lock.
func lockFD(h handle) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	err := windows.LockFileEx(windows.Handle(h.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLockHeld
	}
	return err
}

// lockUnsupported reports whether a lock error means the file system offers
// no locks (some network redirectors).
func lockUnsupported(err error) bool {
	return errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION)
}
