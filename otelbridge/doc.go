// Package otelbridge connects asyncbus to OpenTelemetry in both directions.
//
// Direction A, OpenTelemetry logs into asyncbus: [NewProcessor] returns an
// sdk/log Processor and [NewExporter] an sdk/log Exporter. Both convert each
// OpenTelemetry record into a [log/slog.Record] and hand it straight to a
// [log/slog.Handler] (normally an *asyncbus.Handler, whose lock-free bus is
// the only asynchronous stage): there is no second queue, the record is not
// cloned, and nothing is retained after the call returns.
//
// The mapping is the inverse of the otelslog bridge:
//
//   - level = severity − 9 (an undefined severity becomes INFO); a
//     non-empty severity text is kept as "severity_text";
//   - a string body is the message; any other non-empty body (every kind
//     but the empty value, an empty map included) becomes the "body"
//     attribute;
//   - attributes become slog attributes: maps become groups (an empty map,
//     which slog would drop with its key, is written as {}: map[] in Text,
//     Logfmt and Console), slices become arrays, NaN and ±Inf floats become
//     strings, empty keys become "_", and values nested deeper than the
//     depth limit ([WithMaxDepth]) are written as their OpenTelemetry string
//     form;
//   - the event name is "event_name"; "trace_id", "span_id" and
//     "trace_flags" are lowercase hex and written only when valid; they are
//     the record's own, and a [TraceContext] hook of [StyleOTel] on the same
//     handler leaves them to the record instead of writing the context's a
//     second time;
//   - the observed timestamp is "observed_timestamp" (and is the record time
//     when the record has no timestamp); a non-zero count of attributes the
//     SDK dropped is "dropped_attributes";
//   - the instrumentation scope and the resource are written as "scope" and
//     "resource" groups, each switched by an option ([WithScope],
//     [WithResource]).
//
// Direction B, trace correlation out of asyncbus: [TraceContext] returns a
// hook for asyncbus Options.Features.Context that writes the active span's identifiers
// as top-level fields in one of several [Style]s without allocating.
// [RegisterMetrics] publishes the bus statistics as OpenTelemetry observable
// instruments.
package otelbridge
