package benchmarks

import (
	"fmt"
	"testing"

	"github.com/asyncbus/asyncbus/benchmarks/cpurecord"
)

// BenchmarkCPUPerRecord: the CPU each handler spends per record into
// io.Discard (cpu-ns/rec: the process's user and system time, so
// asyncbus's drainer counts), for each record shape at 1 and 2 goroutines.
// The contestants of one shape and goroutine count run back to back; for
// ratios to slog-json taken within one round, alternating, run
// cmd/cpurecord.
//
//	go test -run '^$' -bench CPUPerRecord -count 5 .
func BenchmarkCPUPerRecord(b *testing.B) {
	for _, s := range cpurecord.Shapes() {
		for _, g := range []int{1, 2} {
			for _, c := range cpurecord.Contestants() {
				b.Run(fmt.Sprintf("%s/g%d/%s", s.Name, g, c.Name), func(b *testing.B) {
					smp := cpurecord.Measure(c, s, g, max(b.N, g))
					b.ReportMetric(smp.CPUNS, "cpu-ns/rec")
					b.ReportMetric(smp.WallNS, "ns/op") // the measured window's, not the set-up's
				})
			}
		}
	}
}
