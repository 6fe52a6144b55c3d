//go:build aix

package filesink

import "golang.org/x/sys/unix"

// lockFD takes an exclusive fcntl(2) write lock on the whole file without
// waiting; AIX has no flock(2). Unlike flock, such a lock belongs to the
// process: it does not detect a second File in the same process, and closing
// any descriptor of the file in the process drops it. It returns errLockHeld
// when another process holds the lock.
func lockFD(fd int) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0} // Len 0: to the end, however far it grows
	for {
		err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk)
		switch err {
		case unix.EINTR:
			continue
		case unix.EACCES, unix.EAGAIN:
			return errLockHeld
		}
		return err
	}
}

// lockUnsupported reports whether a lock error means the file system offers
// no locks.
func lockUnsupported(err error) bool {
	return err == unix.ENOLCK || err == unix.EOPNOTSUPP || err == unix.ENOTSUP || err == unix.ENOSYS
}
