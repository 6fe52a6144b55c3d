//go:build !linux && !windows

package term

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a character device other than the null
// device; a conservative stand-in where the Linux ioctl is not available.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return f.Name() != os.DevNull
}

// EnableANSI reports that terminals here show ANSI colours as they are.
func EnableANSI(io.Writer) bool { return true }
