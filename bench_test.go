package asyncbus_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
)

// slowOutput is an output whose every Write takes delay (a network writer,
// a busy NFS file); with hang set, Write never returns until released.
type slowOutput struct {
	delay   time.Duration
	hang    bool
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *slowOutput) Write(p []byte) (int, error) {
	if w.hang {
		<-w.release
	}
	time.Sleep(w.delay) // the slow output itself, not synchronisation
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// BenchmarkCallerLatency is the table: one goroutine logging 500
// lines a second through a default handler (slog.New(NewHandler(w, nil)))
// into an output that takes 1, 5 or 50 ms per write, or never returns. It
// reports the callers' p50, p99 and slowest call, and for the hung output
// how long 5 Error calls took in all. Records lost on a slow output fail it.
// Run with -benchtime=1000x (two seconds of calls per output).
func BenchmarkCallerLatency(b *testing.B) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		hang  bool
	}{
		{"write=1ms", time.Millisecond, false},
		{"write=5ms", 5 * time.Millisecond, false},
		{"write=50ms", 50 * time.Millisecond, false},
		{"write=hung", 0, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := &slowOutput{delay: tc.delay, hang: tc.hang, release: make(chan struct{})}
			h := asyncbus.NewHandler(w, nil)
			l := slog.New(h)
			lat := make([]time.Duration, 0, b.N)
			const every = 2 * time.Millisecond // 500 calls a second
			start := time.Now()
			i := 0
			for b.Loop() {
				time.Sleep(time.Until(start.Add(time.Duration(i) * every))) // pacing
				t0 := time.Now()
				l.Info("request handled", "i", i, "path", "/api/v1/users/12345/orders")
				lat = append(lat, time.Since(t0))
				i++
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			if tc.hang {
				t0 := time.Now()
				for range 5 {
					l.Error("failed", "i", i)
				}
				b.ReportMetric(float64(time.Since(t0).Milliseconds()), "5errors-ms")
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				_ = h.CloseContext(ctx)
				cancel()
				close(w.release)
				return
			}
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
			if st := h.Stats(); st.Written != uint64(i) {
				b.Fatalf("%d records logged, %d written: %+v", i, st.Written, st)
			}
		})
	}
}
