//go:build !unix

package harness

import "time"

// usage is one reading of the process's resource counters.
type usage struct {
	cpu    time.Duration // user + system CPU time of the whole process
	maxRSS int64         // peak resident set size in bytes (0 if unknown)
}

// readUsage returns zeros where getrusage(2) does not exist: the CPU and
// RSS figures then read 0 and the Markdown table shows them as "n/a".
func readUsage() usage { return usage{} }
