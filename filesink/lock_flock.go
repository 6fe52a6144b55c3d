//go:build unix && !aix

package filesink

import "golang.org/x/sys/unix"

// lockFD takes an exclusive flock(2) on fd without waiting. The lock belongs
// to the open file description, so a second File in the same process
// conflicts too, and the kernel drops it when the descriptor is closed or the
// process dies (kill -9 included). It returns errLockHeld when another
// description holds the lock.
func lockFD(fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errLockHeld
		}
		return err
	}
}

// lockUnsupported reports whether a lock error means the file system offers
// no locks (NFS without a lock manager, some FUSE and SMB mounts).
func lockUnsupported(err error) bool {
	return err == unix.ENOLCK || err == unix.EOPNOTSUPP || err == unix.ENOTSUP || err == unix.ENOSYS
}
