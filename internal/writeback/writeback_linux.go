//go:build linux

package writeback

import (
	"os"

	"golang.org/x/sys/unix"
)

const supported = true

// start is sync_file_range(2) over the whole file with
// SYNC_FILE_RANGE_WRITE: it queues the dirty pages for writing and waits
// for none of them.
func start(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	}); err != nil {
		return err
	}
	return serr
}
