package otelbridge_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// dropTimes removes the times, so that the examples' output is stable.
func dropTimes(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == "observed_timestamp") {
		return slog.Attr{}
	}
	return a
}

// OpenTelemetry logs into asyncbus: a Processor in the SDK's
// LoggerProvider hands each record to the handler, converted to a slog
// record (severity to level, body to message, attributes to attributes).
func ExampleNewProcessor() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: dropTimes})
	p := otelbridge.NewProcessor(h) // the scope as a group; WithResource adds the resource
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))

	var r log.Record
	r.SetSeverity(log.SeverityWarn)
	r.SetBody(attribute.StringValue("disk almost full"))
	r.AddAttributes(attribute.Int("free_mb", 512))
	lp.Logger("storage").Emit(context.Background(), r)

	if err := lp.Shutdown(context.Background()); err != nil { // flushes the handler
		fmt.Println("shutdown:", err)
	}
	if err := h.Close(); err != nil { // the handler's owner closes it
		fmt.Println("close:", err)
	}
	// Output:
	// {"level":"WARN","msg":"disk almost full","free_mb":512,"scope":{"name":"storage"}}
}

// Trace correlation out of asyncbus: the TraceContext hook writes the
// identifiers of the span in each record's context as top-level fields.
func ExampleTraceContext() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		ReplaceAttr: dropTimes,
		Features:    asyncbus.FeatureOptions{Context: otelbridge.TraceContext(otelbridge.StyleOTel)},
	})
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc) // as a tracer's Start would

	logger := slog.New(h)
	logger.InfoContext(ctx, "charged", "amount", 42)
	logger.Info("no span, no identifiers")
	if err := h.Close(); err != nil {
		fmt.Println("close:", err)
	}
	// Output:
	// {"level":"INFO","msg":"charged","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01","amount":42}
	// {"level":"INFO","msg":"no span, no identifiers"}
}

// A cloud preset and the matching trace style: a line Google Cloud Logging
// reads with its severity, message and trace link (the same holds for
// asyncbus.ECSJSON with StyleECS and asyncbus.DatadogJSON with StyleDatadog).
func ExampleTraceContext_googleCloud() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Format:      asyncbus.GCPJSON,
		ReplaceAttr: dropTimes,
		Features:    asyncbus.FeatureOptions{Context: otelbridge.TraceContext(otelbridge.StyleGoogleCloud, otelbridge.WithProjectID("my-project"))},
	})
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)

	slog.New(h).ErrorContext(ctx, "charge failed", "amount", 42)
	if err := h.Close(); err != nil {
		fmt.Println("close:", err)
	}
	// Output:
	// {"severity":"ERROR","message":"charge failed","logging.googleapis.com/trace":"projects/my-project/traces/4bf92f3577b34da6a3ce929d0e0e4736","logging.googleapis.com/spanId":"00f067aa0ba902b7","logging.googleapis.com/trace_sampled":true,"amount":42}
}
