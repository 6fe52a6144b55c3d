//go:build !unix && !windows

package filesink

import "errors"

// lockFD reports that this system (js, wasip1, plan9) has no file locks:
// Open reports it once to OnError and goes on unlocked.
func lockFD(handle) error { return errors.ErrUnsupported }

// lockUnsupported reports whether a lock error means there are no locks.
func lockUnsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
