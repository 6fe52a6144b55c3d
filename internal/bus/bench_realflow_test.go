package bus

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkEnqueueRealFlow measures what Enqueue costs a producer in the
// real flow: the bus configured as the root handler configures it, the
// drainer running and writing a real file, records arriving back to back.
// Only the Enqueue loop is timed; the final drain (Close) is not. "single"
// is one producer, "parallel" one per GOMAXPROCS. ns/op is per record.
// Use a fixed -benchtime (e.g. 1000000x) so the file size stays bounded.
//
// Back to back, producers outrun what the kernel appends to a file (about
// 1 GB/s on the 2-core development machine, i.e. ~200 ns per 208-byte
// record; compare dd's figure for a fresh file), so once the ring has
// filled ns/op is the drain rate, bounded by that append, not the
// producers' cost. For the producers' own cost, take a CPU profile
// (-cpuprofile) and divide Enqueue's cumulative time by the records.
func BenchmarkEnqueueRealFlow(b *testing.B) {
	benchRealFlow(b, func(b *testing.B, bus *Bus, goroutines int) func(Stats) {
		b.ReportAllocs()
		b.SetBytes(int64(len(record200)))
		b.ResetTimer()
		runShares(b.N, goroutines, func(share int) {
			for range share {
				if err := bus.Enqueue(record200); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return nil
	})
}

// benchRealFlow runs body as the sub-benchmarks "single" (one producer) and
// "parallel" (one per GOMAXPROCS), each on a new bus configured as the root
// handler configures it and writing a real file. After body the timer stops
// and the bus is closed (drained); then the report body returned, if any,
// gets the bus's final Stats.
func benchRealFlow(b *testing.B, body func(b *testing.B, bus *Bus, goroutines int) (report func(Stats))) {
	for _, goroutines := range []int{1, runtime.GOMAXPROCS(0)} {
		name := "single"
		if goroutines > 1 {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			f := benchSinks(b)["file"]()
			bus, err := testNew(f, realFlowConfig())
			if err != nil {
				b.Fatal(err)
			}
			report := body(b, bus, goroutines)
			b.StopTimer()
			if err := bus.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			if report != nil {
				report(bus.Stats())
			}
		})
	}
}
