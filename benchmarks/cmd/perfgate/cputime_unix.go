//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time the process has used
// (getrusage(2)): unlike wall time, it does not count the time the
// process's threads sat descheduled on a busy machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
