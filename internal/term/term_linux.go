package term

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether w is a terminal: an *os.File on which the
// terminal-attributes ioctl succeeds (a pipe, a file or /dev/null fails it).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	isTerm := false
	// Control, unlike Fd, leaves the descriptor in non-blocking mode.
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		isTerm = err == nil
	})
	return isTerm
}

// EnableANSI reports that terminals here show ANSI colours as they are.
func EnableANSI(io.Writer) bool { return true }
