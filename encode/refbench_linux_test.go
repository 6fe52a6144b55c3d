package encode

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/asyncbus/asyncbus/internal/threadcpu"
)

// threadCPU returns the CPU time the calling OS thread has used, in ns.
func threadCPU(b *testing.B) int64 {
	ns, ok := threadcpu.Now()
	if !ok {
		b.Fatal("no thread CPU time on this system")
	}
	return ns
}

// BenchmarkReference encodes the reference record (benchmarks/harness's
// ReferenceRecord: the same time, level, message and seven attributes) in
// each fast-path format. Besides sec/op (wall time) it reports cpu-ns/op,
// the encoding goroutine's own thread CPU time per record: on a machine
// shared with other work, wall time also counts the time the thread sat
// descheduled, while thread CPU time does not, so cpu-ns/op is the steadier
// figure for comparing two builds.
func BenchmarkReference(b *testing.B) {
	r := record(fixedTime, slog.LevelInfo, "request handled", 0, accessLogAttrs())
	for _, f := range []Format{JSON, Text, Logfmt} {
		b.Run([]string{"JSON", "Text", "Logfmt"}[f], func(b *testing.B) {
			runtime.LockOSThread() // thread CPU time is this goroutine's only while locked
			defer runtime.UnlockOSThread()
			e := New(Options{Format: f})
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			start := threadCPU(b)
			for b.Loop() {
				buf = e.Append(buf[:0], r, nil)
			}
			b.ReportMetric(float64(threadCPU(b)-start)/float64(b.N), "cpu-ns/op")
			b.SetBytes(int64(len(buf)))
		})
	}
}
