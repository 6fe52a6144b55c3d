//go:build !plan9

package bus

import (
	"errors"
	"syscall"
)

// bareErrno returns the system error number err wraps, or err.
func bareErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// errnoOf returns the system error number err wraps, if it wraps one.
func errnoOf(err error) (uintptr, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return uintptr(errno), true
	}
	return 0, false
}
