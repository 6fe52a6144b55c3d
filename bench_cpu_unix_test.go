//go:build unix

package asyncbus_test

import (
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
)

// freeWriter is an output that costs nothing: not io.Discard itself, so
// that the handler writes it as any plain io.Writer.
type freeWriter struct{}

func (freeWriter) Write(p []byte) (int, error) { return len(p), nil }

var _ io.Writer = freeWriter{}

// benchUser is a record's struct attribute.
type benchUser struct {
	ID    int
	Name  string
	Email string
	Roles []string
}

// BenchmarkCPUPerRecord logs through slog into a writer that costs
// nothing, from 1 and 2 goroutines, short records (a message, no
// attributes) and ~1.1 KB records (a struct, slices, a time, an error),
// and reports the whole process's CPU per record (getrusage: the callers,
// the drainer and the runtime, Close included) and its peak RSS (run one
// case per process for a per-case figure).
func BenchmarkCPUPerRecord(b *testing.B) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	errBench := errors.New("upstream timed out after 3 retries: connection reset by peer")
	user := benchUser{ID: 42, Name: "Ada Lovelace", Email: "ada@example.com", Roles: []string{"admin", "ops", "billing"}}
	tags := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	ids := []int{101, 202, 303, 404, 505, 606, 707, 808, 909, 1001, 1102, 1203}
	pad := strings.Repeat("x", 560)
	long := func(l *slog.Logger, i int) {
		l.Info("request handled with a fairly long message describing what happened",
			"user", user, "tags", tags, "ids", ids, "at", when, "err", errBench,
			"i", i, "path", "/api/v1/accounts/42/transactions", "body", pad)
	}
	short := func(l *slog.Logger, i int) { l.Info("request handled") }
	for _, rc := range []struct {
		name string
		log  func(*slog.Logger, int)
	}{{"short", short}, {"1KB", long}} {
		for _, g := range []int{1, 2} {
			b.Run(rc.name+"/g="+strconv.Itoa(g), func(b *testing.B) {
				h := asyncbus.NewHandler(freeWriter{}, nil)
				l := slog.New(h)
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range g {
					wg.Go(func() {
						for i := w; i < b.N; i += g {
							rc.log(l, i)
						}
					})
				}
				wg.Wait()
				if err := h.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano()
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/rec")
				b.ReportMetric(float64(after.Maxrss), "maxrss-KB")
				st := h.Stats()
				b.ReportMetric(float64(st.WrittenBytes)/float64(max(st.Written, 1)), "B/rec")
			})
		}
	}
}
