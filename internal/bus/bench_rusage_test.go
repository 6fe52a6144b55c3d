//go:build unix

package bus

import (
	"context"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIdleDrainerCPU opens a bus, lets it sit idle for 10 s and reports
// the CPU the whole process used in that window (getrusage RUSAGE_SELF, user +
// system) as a percentage of one core. "bus" starts the window right after New,
// so it includes the drainer's back-off sleeps before it parks; "control" is
// the same window with no bus, i.e. the Go runtime's own background cost
// (sysmon, timers), which "bus" includes too. Both run a GC first.
func BenchmarkIdleDrainerCPU(b *testing.B) {
	for _, withBus := range []bool{false, true} {
		name := "control"
		if withBus {
			name = "bus"
		}
		b.Run(name, func(b *testing.B) {
			var pct float64
			for range b.N {
				var bus *Bus
				if withBus {
					var err error
					if bus, err = testNew(io.Discard, Config{}); err != nil {
						b.Fatal(err)
					}
				}
				pct = idleWindow(b, 10*time.Second)
				if bus != nil {
					if err := bus.Close(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(bus.Stats().Parks), "parks")
				}
			}
			b.ReportMetric(pct, "cpu-%")
		})
	}
}

// idleWindow returns the process CPU use over window as % of one core.
func idleWindow(b *testing.B, window time.Duration) float64 {
	// Finish the GC cycle the ring allocation may have started, so that the
	// window measures steady idle, not the collector (same for the control).
	runtime.GC()
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	time.Sleep(window) // the measurement window itself, not synchronisation
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	return 100 * cpu.Seconds() / wall.Seconds()
}
