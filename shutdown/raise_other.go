//go:build !unix

package shutdown

import "os"

// defaultSignals is what OnSignal catches when given none outside Unix:
// os.Interrupt (Ctrl-C on Windows). Name syscall.SIGTERM to catch a
// Windows console's close too.
var defaultSignals = []os.Signal{os.Interrupt}

// raise ends the process: a signal cannot be sent back to oneself here.
func raise(os.Signal) { os.Exit(1) }
