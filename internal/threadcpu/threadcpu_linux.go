package threadcpu

import "golang.org/x/sys/unix"

// Now returns the CPU time the calling OS thread has used, in ns, and
// true; the caller must hold runtime.LockOSThread for the figure to be its
// goroutine's.
func Now() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
