//go:build !linux

package bus

// threadCPU is not measured on this system.
func threadCPU() (int64, bool) { return 0, false }
