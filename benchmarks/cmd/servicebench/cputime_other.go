//go:build !unix

package main

import (
	"os"
	"time"
)

// stopSignal: without SIGTERM the orchestrator can only kill a server, so
// the benchmark runs on Unix; this keeps the command building elsewhere.
var stopSignal = os.Interrupt

// cpuTime is 0 where getrusage(2) does not exist.
func cpuTime() time.Duration { return 0 }
