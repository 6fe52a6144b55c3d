//go:build !plan9

package syncerr

import (
	"errors"
	"syscall"
)

// errnoOf returns the system error number err wraps, if it wraps one.
func errnoOf(err error) (uintptr, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return uintptr(errno), true
	}
	return 0, false
}
