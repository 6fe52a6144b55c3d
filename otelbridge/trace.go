package otelbridge

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
)

// ownTraceKey is the context key under which [Processor] and [Exporter]
// tell [TraceContext] that the record they hand over writes trace_id,
// span_id and trace_flags of its own.
type ownTraceKey struct{}

// markOwnTrace returns ctx marked for [TraceContext] when r has trace
// identifiers of its own (the converter writes them) and ctx holds a valid
// span (whose identifiers the StyleOTel hook would write under the same
// keys). Otherwise ctx is returned as is, so the mark costs its one
// allocation only when a duplicate was possible.
func markOwnTrace(ctx context.Context, r *sdklog.Record) context.Context {
	if ctx == nil || (!r.TraceID().IsValid() && !r.SpanID().IsValid()) {
		return ctx
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return context.WithValue(ctx, ownTraceKey{}, true)
}

// recordHasOwnTrace reports whether ctx carries markOwnTrace's mark.
func recordHasOwnTrace(ctx context.Context) bool {
	own, _ := ctx.Value(ownTraceKey{}).(bool)
	return own
}

// Style selects the field names and formats [TraceContext] writes.
type Style int

const (
	// StyleOTel writes OpenTelemetry's trace_id, span_id (lowercase hex) and
	// trace_flags (two hex digits). It is the zero value.
	StyleOTel Style = iota
	// StyleECS writes Elastic Common Schema trace.id and span.id (hex).
	StyleECS
	// StyleGoogleCloud writes logging.googleapis.com/trace as
	// "projects/<project>/traces/<hex>", the form Cloud Logging links to
	// Cloud Trace, logging.googleapis.com/spanId (hex) and
	// logging.googleapis.com/trace_sampled (a JSON boolean). The project is
	// [WithProjectID]'s, else the GOOGLE_CLOUD_PROJECT environment variable
	// read when TraceContext is called; without either the bare hex trace
	// ID is written.
	StyleGoogleCloud
	// StyleDatadog writes dd.trace_id as the whole 128-bit trace ID in 32
	// lowercase hex digits and dd.span_id as the span ID in decimal, both
	// as JSON strings: what Datadog's Go tracer (dd-trace-go v2, whose
	// 128-bit trace IDs are on by default) writes through its log/slog
	// integration, and what Datadog correlates with its traces.
	StyleDatadog
	// StyleDatadog64 writes dd.trace_id and dd.span_id as decimal strings
	// of the low 64 bits of the trace ID and of the span ID (strings,
	// because 64-bit values do not survive JSON parsers that use doubles):
	// the older form, which dd-trace-go v1 writes by default and Datadog's
	// OpenTelemetry guide converts to, for pipelines that still expect it.
	StyleDatadog64
)

// String returns s's name as it is written in Go ("StyleGoogleCloud"), or
// "Style(N)" for a value that is not a style.
func (s Style) String() string {
	switch s {
	case StyleOTel:
		return "StyleOTel"
	case StyleECS:
		return "StyleECS"
	case StyleGoogleCloud:
		return "StyleGoogleCloud"
	case StyleDatadog:
		return "StyleDatadog"
	}
	return "Style(" + strconv.Itoa(int(s)) + ")"
}

// Field names written by [TraceContext].
const (
	KeyECSTraceID   = "trace.id"                             // StyleECS trace ID
	KeyECSSpanID    = "span.id"                              // StyleECS span ID
	KeyGCPTrace     = "logging.googleapis.com/trace"         // StyleGoogleCloud trace resource name
	KeyGCPSpanID    = "logging.googleapis.com/spanId"        // StyleGoogleCloud span ID
	KeyGCPSampled   = "logging.googleapis.com/trace_sampled" // StyleGoogleCloud sampling decision (boolean)
	KeyDDTraceID    = "dd.trace_id"                          // StyleDatadog trace ID (32 hex; StyleDatadog64: decimal, low 64 bits)
	KeyDDSpanID     = "dd.span_id"                           // StyleDatadog and StyleDatadog64 span ID (decimal)
	maxGCPProjectID = 100                                    // far above GCP's 30-character limit; longer IDs still work, via the heap
)

// TraceOption configures [TraceContext].
type TraceOption func(*traceConfig)

type traceConfig struct {
	project string
}

// WithProjectID sets the Google Cloud project ID used by [StyleGoogleCloud].
func WithProjectID(id string) TraceOption { return func(c *traceConfig) { c.project = id } }

// TraceContext returns a hook for asyncbus Options.Features.Context that writes the
// identifiers of the span in the record's context, read with
// trace.SpanContextFromContext, in the given style. Nothing is written when
// the span context is not valid. With a valid span the hook allocates
// nothing: identifiers are encoded into stack arrays and written with
// FieldWriter.AddBytes. An unknown style behaves as [StyleOTel].
//
// [StyleOTel] uses the keys under which [Processor] and [Exporter] write an
// OpenTelemetry record's own trace identifiers. When such a record has
// identifiers of its own (a trace ID or a span ID), the hook writes nothing
// for it, so that no key appears twice: the record's identifiers say where
// it was emitted and win over the context's, whether they differ or not.
// Only then does the hook cost one allocation (the Processor or Exporter
// marks the context). Through an asyncbus handler with an open group
// (WithGroup) the record's identifiers land inside the group, where they
// cannot collide, and the hook writes the context's at the top level as
// usual. The other styles use other keys and always write.
func TraceContext(style Style, opts ...TraceOption) func(context.Context, *asyncbus.FieldWriter) {
	var cfg traceConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	switch style {
	case StyleECS:
		return ecsTraceFields
	case StyleGoogleCloud:
		prefix := ""
		if cfg.project == "" {
			cfg.project = os.Getenv("GOOGLE_CLOUD_PROJECT")
		}
		if cfg.project != "" {
			prefix = "projects/" + cfg.project + "/traces/"
		}
		return func(ctx context.Context, w *asyncbus.FieldWriter) {
			sc := trace.SpanContextFromContext(ctx)
			if !sc.IsValid() {
				return
			}
			var buf [len("projects//traces/") + maxGCPProjectID + 32]byte
			tid, sid := sc.TraceID(), sc.SpanID()
			b := append(buf[:0], prefix...)
			b = hex.AppendEncode(b, tid[:])
			w.AddBytes(KeyGCPTrace, b)
			var sb [16]byte
			hex.Encode(sb[:], sid[:])
			w.AddBytes(KeyGCPSpanID, sb[:])
			w.AddAttr(slog.Bool(KeyGCPSampled, sc.IsSampled())) // a Bool Attr allocates nothing
		}
	case StyleDatadog:
		return datadogTraceFields
	case StyleDatadog64:
		return datadog64TraceFields
	default:
		return otelTraceFields
	}
}

// ecsTraceFields is TraceContext for StyleECS.
func ecsTraceFields(ctx context.Context, w *asyncbus.FieldWriter) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	var buf [48]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(buf[:32], tid[:])
	hex.Encode(buf[32:], sid[:])
	w.AddBytes(KeyECSTraceID, buf[:32])
	w.AddBytes(KeyECSSpanID, buf[32:])
}

// datadogTraceFields is TraceContext for StyleDatadog.
func datadogTraceFields(ctx context.Context, w *asyncbus.FieldWriter) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	var buf [32 + 20]byte // 32 hex digits, then the longest uint64 in decimal (20 digits)
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(buf[:32], tid[:])
	w.AddBytes(KeyDDTraceID, buf[:32])
	w.AddBytes(KeyDDSpanID, strconv.AppendUint(buf[32:32], binary.BigEndian.Uint64(sid[:]), 10))
}

// datadog64TraceFields is TraceContext for StyleDatadog64.
func datadog64TraceFields(ctx context.Context, w *asyncbus.FieldWriter) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	var buf [20]byte // the longest uint64 in decimal has 20 digits
	tid, sid := sc.TraceID(), sc.SpanID()
	w.AddBytes(KeyDDTraceID, strconv.AppendUint(buf[:0], binary.BigEndian.Uint64(tid[8:]), 10))
	w.AddBytes(KeyDDSpanID, strconv.AppendUint(buf[:0], binary.BigEndian.Uint64(sid[:]), 10))
}

// otelTraceFields is TraceContext for StyleOTel (and an unknown style).
func otelTraceFields(ctx context.Context, w *asyncbus.FieldWriter) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || recordHasOwnTrace(ctx) {
		// A record from Processor or Exporter with identifiers of its
		// own writes them under these keys; one JSON object must not
		// hold a key twice, and the record's say where it was emitted.
		return
	}
	var buf [50]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(buf[:32], tid[:])
	hex.Encode(buf[32:48], sid[:])
	hex.Encode(buf[48:], []byte{byte(sc.TraceFlags())})
	w.AddBytes(KeyTraceID, buf[:32])
	w.AddBytes(KeySpanID, buf[32:48])
	w.AddBytes(KeyTraceFlags, buf[48:])
}

// TraceGroup is asyncbus.FlightRecorder's Group for OpenTelemetry: a
// context's group is the trace id of its span, so an Error in one request
// writes the Debug records kept for that trace and nobody else's. A context
// without a valid trace id has no group.
func TraceGroup(ctx context.Context) (id [16]byte, ok bool) {
	tid := trace.SpanContextFromContext(ctx).TraceID()
	return tid, tid.IsValid()
}
