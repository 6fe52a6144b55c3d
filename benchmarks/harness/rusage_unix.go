//go:build unix

package harness

import (
	"runtime"
	"syscall"
	"time"
)

// usage is one reading of the process's resource counters.
type usage struct {
	cpu    time.Duration // user + system CPU time of the whole process
	maxRSS int64         // peak resident set size in bytes (0 if unknown)
}

// readUsage reads the process's CPU time and peak RSS with getrusage(2).
func readUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	rss := int64(ru.Maxrss)
	// Linux and most BSDs report ru_maxrss in KiB; Darwin reports bytes.
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		rss *= 1024
	}
	return usage{cpu: cpu, maxRSS: rss}
}
