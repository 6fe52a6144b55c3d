package term

import (
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// IsTerminal reports whether w is a Windows console: an *os.File whose
// handle has a console mode. (A mintty or Cygwin terminal is a pipe, and
// is not one.)
func IsTerminal(w io.Writer) bool {
	ok := false
	consoleHandle(w, func(h windows.Handle) {
		var mode uint32
		ok = windows.GetConsoleMode(h, &mode) == nil
	})
	return ok
}

// EnableANSI switches a console to virtual-terminal processing, so that
// ANSI colour sequences show as colours, and reports whether it is on (it is
// not on consoles older than Windows 10). Writers that are not consoles are
// left alone and reported as able: they receive the bytes as they are.
func EnableANSI(w io.Writer) bool {
	ok := true
	consoleHandle(w, func(h windows.Handle) {
		var mode uint32
		if windows.GetConsoleMode(h, &mode) != nil {
			return // not a console
		}
		if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
			return
		}
		ok = windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
	})
	return ok
}

// consoleHandle calls fn with w's handle when w is an *os.File.
func consoleHandle(w io.Writer, fn func(windows.Handle)) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { fn(windows.Handle(fd)) })
}
