//go:build !linux

package bus

// mapping is ring memory outside the Go heap, on Linux only (see
// ringmap_linux.go); elsewhere the ring is on the heap.
type mapping struct{ ring []byte }

func mapRing(uint64) *mapping { return nil }
func (*mapping) release()     {}
func (*mapping) unmap()       {}
