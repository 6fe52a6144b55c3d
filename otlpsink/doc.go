// Package otlpsink ships asyncbus records to an OpenTelemetry Collector (or
// any OTLP receiver) over OTLP/HTTP protobuf, or over OTLP/gRPC
// (Options.Protocol) without the grpc module: net/http's HTTP/2, with the
// same delivery, retries and counts.
//
// Records are encoded on the caller, without allocating, as OTLP LogRecords
// already framed as elements of ScopeLogs.log_records, and enqueued on the
// handler's lock-free ring; the drainer's batch is then just their
// concatenation, which the Sink wraps in one ExportLogsServiceRequest with
// the precomputed resource and scope and POSTs to <endpoint>/v1/logs.
//
// Delivery: a batch is acknowledged to the ring only once the collector
// accepted it. Retryable failures (429, 502, 503, 504, network errors) are
// retried with capped, jittered exponential back-off, honouring Retry-After
// (at most a minute, or RetryMax if longer); meanwhile records wait in the
// ring, the handler's Overflow policy decides what callers see, and the
// handler's OnError is told at the first failure of an outage, then at most
// once a minute with a count. Permanent rejections (400 and other 4xx/5xx)
// and TLS verification failures are not retried: they are counted as
// failed, in the handler's Stats and in Sink.Stats, and reported. Over
// gRPC the status codes the OTLP specification retries are retried
// (RESOURCE_EXHAUSTED only with a RetryInfo, whose delay is honoured as
// Retry-After is), the others are permanent (see GRPCError). When a
// drained batch is split into several requests (MaxRequestBytes) and one is
// refused, the others are still sent, and the handler's Written and Failed
// counts are the records the collector accepted and refused (a refused
// drop marker is counted in Sink.Stats.FailedRecords and reported, but in
// the handler's DropMarkers, not its Failed). With
// asyncbus.Options.Ring.File, records accepted before a crash or during an
// outage are sent by the next start (at least once: a batch in flight at the
// crash is sent again). A permanent refusal during that replay stops it:
// NewHandler fails with the refusal, nothing after the refused request is
// sent, and the ring file keeps the replayed batch for the next start
// (which sends again the records accepted before the refusal).
//
// # Attributes
//
// Attributes are written as otelslog (go.opentelemetry.io/contrib/bridges/otelslog)
// and the OTel SDK (sdk/log, otlploghttp) write them, so that dashboards and
// queries see the same data after a migration:
//
//   - An error-valued attribute at a handler level (a record's attribute,
//     a WithAttrs attribute, also under WithGroup, whatever its key) is the
//     record's exception.message and exception.type (semantic conventions;
//     the type is ErrorType() if the error has one, else the Go type after
//     fmt.Errorf's %w wrappers), written after the other attributes; the
//     last such error wins, and an attribute logged under either key keeps
//     its own value. Inside a group value (slog.Group) an error stays a
//     string under its key, as otelslog keeps it there.
//   - Maps are kvlists (keys as strings, other key types as %+v), slices and
//     arrays of any type are arrays, pointers are followed, structs are %+v,
//     times and durations int64 nanoseconds, []byte bytes, other kinds
//     "unhandled: (T) %+v"; a value that reflection follows more than 100
//     levels deep (a cycle) is "<max-depth-exceeded>".
//   - Keys are unique at every level: a repeated key keeps its first
//     position and its last value, across WithAttrs and the record too (as
//     the SDK's Record.AddAttributes). Keys are never empty: an attribute
//     with an empty key is dropped (OTLP's data model requires keys).
//   - A group value, map or slice nested deeper than 64 levels is an empty
//     value, as the SDK's default AttributeValueDepthLimit cuts it.
//
// With asyncbus.Options.Features.Sequence every LogRecord's first
// attributes are asyncbus.seq (its number, an int) and asyncbus.run (the
// handler's run identity, Stats.RunID, a string), and a drop marker is a
// WARN LogRecord with the body "asyncbus: records dropped" and the
// attribute asyncbus.dropped, the count of records lost at that point: its
// asyncbus.seq is the first lost record's number, and the next record's
// is asyncbus.dropped above it. A record's own top-level attribute
// asyncbus.seq, asyncbus.run or asyncbus.dropped is sent as
// asyncbus.seq_, asyncbus.run_ or asyncbus.dropped_, with Sequence or
// not: the numbers' keys are never repeated (OTLP requires unique keys)
// and no record passes for a drop marker. The semantic conventions have no
// attribute for a record's place in its stream (log.record.uid names a
// record, not its order), hence the asyncbus namespace, which no
// convention will take; service.instance.id, a resource attribute, names
// the process, not the handler's run. NewHandler refuses Sequence with
// asyncbus.Options.Ring.File. Without Sequence, the drop marker is the
// handler's text line as the body of a WARN record.
//
// The common path (the slog kinds, groups, errors, the common slices)
// allocates nothing per record; maps, other slices and pointers go through
// reflection, which may.
//
// # Differences from otelslog and the SDK
//
// The differential test in the integration module compares both paths
// field by field and accepts only these (each with its reason):
//
//   - An enclosing WithGroup without attributes of its own is kept
//     (otelslog v0.21 drops it: WithGroup("a").WithGroup("b") gives b={k=1}):
//     log/slog's handler rules keep every group that has content.
//   - An empty group is left out, and so does not replace an earlier
//     attribute of its key (otelslog writes an empty map): slog's rules.
//     So is a group whose members all have empty keys (dropped, below):
//     after slog.Duration("d", 0), a later group "d" holding only
//     slog.Int("", 1) leaves d=0 in place, where the SDK's map {"": 1}
//     replaces it.
//   - A LogValuer whose value is a group, logged under an empty key, is
//     inlined (otelslog writes it under "", which the SDK drops at the top
//     level and keeps inside groups): slog's rules.
//   - An empty key inside a group or map is dropped too (otelslog and the
//     SDK keep it there): OTLP keys must not be empty.
//   - A kvlist keeps the order logged (the SDK sorts a map by key): OTLP
//     kvlists are unordered, and sorting would cost every record.
//   - A uint64 above MaxInt64 logged as slog.Uint64 is its decimal text
//     (otelslog: a rounded double): lossless. Inside slices and maps both
//     write the text.
//   - Invalid UTF-8 is replaced with U+FFFD (the SDK's exporter fails the
//     whole request, as protobuf refuses such strings): no batch is lost.
//   - Levels beyond DEBUG-4..ERROR+7 are clamped to TRACE and FATAL4 (the
//     SDK's exporter writes UNSPECIFIED): the record keeps a severity.
//   - An Error or ErrorType method that panics gives slog's "!PANIC: ..."
//     (or "<nil>" for a nil receiver) as the message (the SDK path panics
//     in the logging call): a log call must not crash.
//   - WithGroup levels are kept at any depth (the SDK empties the 65th
//     nested map): they are the handler's structure, not a value.
//   - No attribute count limit (the SDK keeps 128 per record by default and
//     counts the rest as dropped): nothing logged is dropped silently.
//   - A Named handler's name (LoggerKey) and asyncbus.Options.Features.Context
//     fields are attributes otelslog has no counterpart for.
//   - The scope is Options.ScopeName and ScopeVersion (otelslog: the
//     handler's name and WithVersion), with no schema URL; the resource has
//     no telemetry.sdk.* attributes (the SDK's resource.Default adds
//     them): no SDK is involved; set them in Options.Resource if needed.
//   - Certificate variables: a file that cannot be used, or half a client
//     pair, is an error from New (the SDK reports it to otel.Handle and
//     connects without): a misconfiguration is not a silent fallback.
//   - Delivery: retries continue until Close (the SDK gives a batch up
//     after a minute and drops records when its queue is full); OnError is
//     told when an outage begins, at most once a minute while it lasts, and
//     once when it ends, with the records that waited and for how long.
package otlpsink
