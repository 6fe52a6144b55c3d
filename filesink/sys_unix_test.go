//go:build unix

package filesink

import "syscall"

// preallocUnsupportedErrs are the preallocate errors that mean the file
// system cannot preallocate at all.
var preallocUnsupportedErrs = []error{syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EINVAL}
