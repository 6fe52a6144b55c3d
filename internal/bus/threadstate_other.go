//go:build !linux

package bus

// threadID is 0 where the thread's state cannot be read.
func threadID() int32 { return 0 }

// threadWaits says true where the thread's state cannot be read: the
// runnable goroutines alone then tell (see outputWatch.stuck).
func threadWaits(int32) bool { return true }
