package benchmarks

import (
	"log/slog"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkHandOff measures what a quiet program's log call pays for its
// wait on this machine, without asyncbus: a caller that every 10 ms hands
// a ~120-byte line to a writer goroutine, which writes it to a real file
// and answers, and waits for the answer (the quiet wait's round trip).
// "direct" writes the line on the caller (the write's own cost); "slog"
// logs the quiet benchmark's record through slog.JSONHandler, which
// writes it on the caller (a synchronous handler's whole call); "plain"
// hands it to an ordinary goroutine; "locked" to one that called
// runtime.LockOSThread, as asyncbus's drainer does: every hand-off to and
// from it switches OS threads. Reports p50, p99 and max in µs; run with
// -benchtime=500x (five seconds per case).
func BenchmarkHandOff(b *testing.B) {
	line := []byte(`{"time":"2026-12-06T10:00:00.000000000Z","level":"INFO","msg":"request handled","i":1,"path":"/api/v1/users/12345/orders"}` + "\n")
	for _, mode := range []string{"direct", "slog", "plain", "locked"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.CreateTemp(b.TempDir(), "handoff-*.log")
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			req, ans := make(chan []byte, 1), make(chan error, 1)
			sl := slog.New(slog.NewJSONHandler(f, nil))
			if mode != "direct" && mode != "slog" {
				go func() {
					if mode == "locked" {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
					}
					for p := range req {
						_, err := f.Write(p)
						ans <- err
					}
				}()
				defer close(req)
			}
			lat := make([]time.Duration, 0, b.N)
			const every = 10 * time.Millisecond // a quiet program's pace
			start := time.Now()
			i := 0
			for b.Loop() {
				time.Sleep(time.Until(start.Add(time.Duration(i) * every))) // pacing
				t0 := time.Now()
				switch mode {
				case "direct":
					_, err = f.Write(line)
				case "slog":
					sl.Info("request handled", "i", i, "path", "/api/v1/users/12345/orders")
				default:
					req <- line
					err = <-ans
				}
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
		})
	}
}
