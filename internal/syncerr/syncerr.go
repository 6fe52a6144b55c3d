// Package syncerr tells a failed sync from an output that has nothing to
// sync (a pipe, a terminal, a socket), on every platform.
package syncerr

import (
	"errors"
	"runtime"
	"slices"
)

// notSyncableErrnos holds, for each GOOS, the error numbers with which
// syncing a file that has nothing to make durable fails: fsync(2) (on
// Windows FlushFileBuffers) on a pipe, a terminal, a console, a socket or
// a device such as /dev/null. They are numbers, not the syscall package's
// names, so that every platform's row is tested on any platform. EBADF is
// not here: it is also the answer for a closed or read-only descriptor, a
// real error.
var notSyncableErrnos = map[string][]uintptr{
	// EINVAL (pipes, FIFOs, sockets, terminals), EROFS ("a special file
	// which does not support synchronization", fsync(2)), EOPNOTSUPP.
	"linux":   {22, 30, 95},
	"android": {22, 30, 95},
	// EINVAL, ENOTTY and ENOTSUP/EOPNOTSUPP: on Apple systems a terminal
	// answers "inappropriate ioctl for device" to F_FULLFSYNC, which Go's
	// Sync uses (uber-go/zap#880), and a pipe ENOTSUP.
	"darwin":    {22, 25, 45, 102},
	"ios":       {22, 25, 45, 102},
	"freebsd":   {22, 25, 45},
	"dragonfly": {22, 25, 45},
	"netbsd":    {22, 25, 45, 86},
	"openbsd":   {22, 25, 45, 91},
	"solaris":   {22, 25, 48, 122},
	"illumos":   {22, 25, 48, 122},
	"aix":       {22, 25, 124, 64},
	// ERROR_INVALID_FUNCTION (the NUL device), ERROR_INVALID_HANDLE (a
	// console handle), ERROR_NOT_SUPPORTED.
	"windows": {1, 6, 50},
	// EINVAL and ENOTSUP in WASI's numbering, and in Node's.
	"wasip1": {28, 58},
	"js":     {22, 25, 95},
}

// NotSyncable reports whether err, from an output's Sync, only says that the
// output is not a file that can be synced (a terminal, a pipe, a socket),
// which is not a failure: there is nothing to make durable.
func NotSyncable(err error) bool { return NotSyncableOn(runtime.GOOS, err) }

// NotSyncableOn is NotSyncable for the errors of the platform goos.
func NotSyncableOn(goos string, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errors.ErrUnsupported) {
		return true // an output's own "cannot sync", or ENOSYS
	}
	n, ok := errnoOf(err)
	return ok && slices.Contains(notSyncableErrnos[goos], n)
}

// Errnos are the error numbers that mean "nothing to sync" on goos.
func Errnos(goos string) []uintptr { return notSyncableErrnos[goos] }
