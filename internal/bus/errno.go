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
