// Package threadcpu reads the CPU time of the calling OS thread, for the
// benchmarks that report a goroutine's own CPU cost beside its wall time
// (on a shared machine wall time also counts the time a thread sat
// descheduled). Only tests and benchmarks import it.
package threadcpu
