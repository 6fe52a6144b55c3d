package bus

import (
	"os"
	"strconv"
	"syscall"
)

// threadID is the calling OS thread's id, which the drainer records before
// each call into the output (outputWatch.callTid).
func threadID() int32 { return int32(syscall.Gettid()) }

// threadWaits reports whether the OS thread tid sleeps or waits for I/O
// (state S or D in /proc): a drainer blocked in the output's write(2),
// or parked with nothing else for its thread to run. A thread that runs
// or waits for a processor (R) is a call that is progressing, maybe
// slowly on a loaded machine. Unknown (no /proc): true.
func threadWaits(tid int32) bool {
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(int(tid)) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which ends with the last ')'.
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 >= len(stat) || stat[i+2] == 'S' || stat[i+2] == 'D'
		}
	}
	return true
}
