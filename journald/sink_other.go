//go:build !linux

package journald

import (
	"fmt"
	"runtime"
	"time"
)

// conn stands in for the Linux socket: there is no journal here.
type conn struct{}

// dial fails: the systemd journal exists only on Linux.
func dial(string, time.Duration) (*conn, error) {
	return nil, fmt.Errorf("journald: the systemd journal exists only on Linux, not on %s", runtime.GOOS)
}

func (*conn) send([]byte) (bool, error) { return false, errClosed }

func (*conn) close() error { return nil }
