//go:build !unix

package main

import "time"

var startWall = time.Now()

// processCPU stands in wall time where getrusage(2) is missing: the gate
// then measures wall time, which a busy machine makes noisier.
func processCPU() time.Duration { return time.Since(startWall) }
