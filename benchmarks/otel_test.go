package benchmarks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// OpenTelemetry logs SDK into a file: a 5-attribute record emitted through
// an SDK LoggerProvider whose processor is either
//
//   - otelbridge.Processor → asyncbus.Handler (JSON) → file, or
//   - the SDK's BatchProcessor → stdoutlog exporter (JSON) → file.
//
// The timed region includes the final flush, so the background encoding
// and writing of both pipelines is paid for inside ns/op. The batch
// processor drops its oldest record when its queue is full; its queue is
// sized to b.N so that both pipelines write every record ("lines/op"
// reports what reached the file and must be 1).

func otelRecord() log.Record {
	var r log.Record
	r.SetTimestamp(time.Now())
	r.SetSeverity(log.SeverityInfo)
	r.SetBody(attribute.StringValue("request served"))
	r.AddAttributes(
		attribute.String("method", "GET"),
		attribute.String("path", "/api/v1/users"),
		attribute.Int("status", 200),
		attribute.Float64("latency_ms", 12.5),
		attribute.Bool("cached", false),
	)
	return r
}

func otelFile(b *testing.B) *os.File {
	b.Helper()
	f, err := os.Create(filepath.Join(b.TempDir(), "otel.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return f
}

func countLines(b *testing.B, f *os.File) int {
	b.Helper()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Count(data, []byte{'\n'})
}

func BenchmarkOTelSDK(b *testing.B) {
	ctx := context.Background()
	b.Run("otelbridge.Processor+asyncbus", func(b *testing.B) {
		f := otelFile(b)
		h := asyncbus.NewHandler(f, nil)
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(otelbridge.NewProcessor(h)))
		l := lp.Logger("bench")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			l.Emit(ctx, otelRecord())
		}
		if err := lp.ForceFlush(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := lp.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(countLines(b, f))/float64(b.N), "lines/op")
	})
	b.Run("sdk.BatchProcessor+stdoutlog", func(b *testing.B) {
		f := otelFile(b)
		exp, err := stdoutlog.New(stdoutlog.WithWriter(f))
		if err != nil {
			b.Fatal(err)
		}
		bp := sdklog.NewBatchProcessor(exp, sdklog.WithMaxQueueSize(b.N+1))
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(bp))
		l := lp.Logger("bench")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			l.Emit(ctx, otelRecord())
		}
		if err := lp.ForceFlush(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := lp.Shutdown(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(countLines(b, f))/float64(b.N), "lines/op")
	})
}
