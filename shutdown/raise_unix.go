//go:build unix

package shutdown

import (
	"os"
	"syscall"
)

// defaultSignals is what OnSignal catches when given none: the signal
// Kubernetes, systemd and docker stop a process with.
var defaultSignals = []os.Signal{syscall.SIGTERM}

// raise sends sig to this process again. OnSignal no longer catches it, so
// it gets the disposition it had before: the Go runtime's default (end the
// process, killed by sig), another Notify's channel, or ignored.
func raise(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		os.Exit(1)
	}
	if err := syscall.Kill(syscall.Getpid(), s); err != nil {
		os.Exit(1)
	}
}
