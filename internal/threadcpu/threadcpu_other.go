//go:build !linux

package threadcpu

// Now reports false: a thread's CPU time is not measured on this system.
func Now() (int64, bool) { return 0, false }
