package benchmarks

// asyncbus otlpsink against the OpenTelemetry SDK path (otelslog →
// sdk/log BatchProcessor → otlploghttp), both into the same local
// OTLP/HTTP receiver. Run:
//
//	go test -run XX -bench 'OTLP' -benchtime 200000x ./
//	go test -run XX -bench 'OTLPOutage' -benchtime 1x ./
//
// cpu-ns/rec is process CPU (user+system, from getrusage) per record; it
// includes the in-process receiver's work, which is about the same for
// both contestants (same records, same protocol).

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// otlpReceiver counts the LogRecords of every accepted request; while down
// it answers 503.
type otlpReceiver struct {
	srv     *httptest.Server
	records atomic.Int64
	down    atomic.Bool
}

func newOTLPReceiver(b *testing.B) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc.down.Load() {
			http.Error(w, "outage", http.StatusServiceUnavailable)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n, ok := countLogRecords(data)
		if !ok {
			http.Error(w, "malformed", http.StatusBadRequest)
			return
		}
		rc.records.Add(int64(n))
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(rc.srv.Close)
	return rc
}

// countLogRecords counts ResourceLogs.scope_logs.log_records in an
// ExportLogsServiceRequest.
func countLogRecords(b []byte) (int, bool) {
	n := 0
	ok := eachField(b, func(num protowire.Number, v []byte) bool { // resource_logs
		return num != 1 || eachField(v, func(num protowire.Number, v []byte) bool { // scope_logs
			return num != 2 || eachField(v, func(num protowire.Number, _ []byte) bool {
				if num == 2 {
					n++
				}
				return true
			})
		})
	})
	return n, ok
}

func eachField(b []byte, f func(protowire.Number, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 || !f(num, v) {
			return false
		}
		b = b[n:]
	}
	return true
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// otlpContestant is one pipeline: a logger and a function that delivers
// everything and shuts it down.
type otlpContestant struct {
	name string
	make func(b *testing.B, url string) (*slog.Logger, func())
}

var otlpContestants = []otlpContestant{
	{"asyncbus-otlpsink", func(b *testing.B, url string) (*slog.Logger, func()) {
		h, err := otlpsink.NewHandler(otlpsink.Options{
			Endpoint: url, Headers: map[string]string{}, Compression: "none",
			Resource: []slog.Attr{slog.String("service.name", "bench")},
		}, &asyncbus.Options{OnError: func(error) {}})
		if err != nil {
			b.Fatal(err)
		}
		return slog.New(h), func() {
			if err := h.Close(); err != nil {
				b.Error(err)
			}
		}
	}},
	{"otelslog-BatchProcessor-otlploghttp", func(b *testing.B, url string) (*slog.Logger, func()) {
		exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpointURL(url+"/v1/logs"))
		if err != nil {
			b.Fatal(err)
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		return slog.New(otelslog.NewHandler("bench", otelslog.WithLoggerProvider(lp))), func() {
			if err := lp.Shutdown(context.Background()); err != nil {
				b.Error(err)
			}
		}
	}},
}

func logReference(l *slog.Logger, ctx context.Context, i int) {
	// LogAttrs with five attributes: key-value arguments box ints (an
	// allocation in the caller), and a slog.Record keeps only five inline.
	l.LogAttrs(ctx, slog.LevelInfo, "request served", slog.String("method", "GET"),
		slog.String("path", "/api/v1/items"), slog.Int("status", 200),
		slog.Duration("took", 1500*time.Microsecond), slog.Int("seq", i))
}

// BenchmarkOTLP: caller cost (ns/op, allocs/op) and process CPU per
// record, delivered into the receiver; lost/op is records not received.
func BenchmarkOTLP(b *testing.B) {
	ctx := context.Background()
	for _, c := range otlpContestants {
		b.Run(c.name, func(b *testing.B) {
			rc := newOTLPReceiver(b)
			l, done := c.make(b, rc.srv.URL)
			cpu0 := cpuNow()
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				logReference(l, ctx, i)
				i++
			}
			b.StopTimer()
			done()
			cpu := cpuNow() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(i), "cpu-ns/rec")
			b.ReportMetric(float64(int64(i)-rc.records.Load())/float64(i), "lost/op")
		})
	}
}

// BenchmarkOTLPOutage logs at a steady 10k records/s for 4 s with the
// receiver answering 503 from 1 s to 3 s, then shuts down, and reports
// how many records were lost (run with -benchtime 1x).
func BenchmarkOTLPOutage(b *testing.B) {
	const (
		rate  = 10000
		total = 4 * rate
	)
	ctx := context.Background()
	for _, c := range otlpContestants {
		b.Run(c.name, func(b *testing.B) {
			var lost, received int64
			for b.Loop() {
				rc := newOTLPReceiver(b)
				l, done := c.make(b, rc.srv.URL)
				start := time.Now()
				tick := time.NewTicker(time.Millisecond)
				for i := 0; i < total; {
					<-tick.C
					el := time.Since(start)
					rc.down.Store(el >= time.Second && el < 3*time.Second)
					for due := int(el.Seconds() * rate); i < due && i < total; i++ {
						logReference(l, ctx, i)
					}
				}
				tick.Stop()
				rc.down.Store(false)
				done()
				received = rc.records.Load()
				lost = total - received
			}
			b.ReportMetric(float64(lost), "lost")
			b.ReportMetric(float64(received), "received")
		})
	}
}
