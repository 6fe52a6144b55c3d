//go:build race

package encode

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// pooled scratch space is sometimes allocated again.
const raceEnabled = true
