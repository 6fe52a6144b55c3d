// Package asyncbus is a fast, asynchronous log/slog handler.
//
// Each record is encoded on the caller's goroutine into a pooled buffer (JSON,
// text, logfmt or console), then copied into a lock-free multi-producer
// ring. One drainer goroutine writes the ring to the output in large
// batches, adapting batch size and sleep to the backlog and parking when
// idle; only that goroutine calls the output. A log call may wait for it,
// always within a bound: a quiet handler's record until it is written (so
// a program that returns without Close keeps its lines), a record at or
// above slog.LevelError until it is written, one at or above
// Options.SyncLevel until it is synced, and with Overflow Block a full
// ring for room while the output makes progress. The README's guarantees
// list every wait and its bound.
//
//	h := asyncbus.NewHandler(os.Stdout, nil)
//	defer h.Close()
//	asyncbus.SetDefault(h) // slog's default, and the standard log package's output
//
// or, keeping no handle, with CloseDefault as the matching shutdown:
//
//	asyncbus.SetDefault(asyncbus.NewHandler(os.Stdout, nil))
//	defer asyncbus.CloseDefault()
//
// Nothing accepted is lost silently: records refused because the ring was
// full (Drop mode) or because the handler was closed are counted in Stats,
// and the drainer writes an in-band marker line at the gap saying how many
// records were lost there. One record's work is bounded, in every format
// and for attributes from the call, WithAttrs and WithGroup alike: past
// 65,536 attributes (groups and LogValuers included) or once 16 MiB of
// them are written, the attribute at hand is written as
// encode.TruncatedValue and the record's remaining attributes are left
// out; the line shows the cut, Stats does not count it. The message is
// not an attribute and is written whole, and so is an attribute begun
// under 16 MiB, so a line can pass 16 MiB by those two.
//
// Importing asyncbus adds no HTTP routes and pulls in neither net/http nor
// expvar. Related packages: filesink (a rotating log file output), levelhttp
// (per-logger levels over HTTP), otelbridge (OpenTelemetry logs, trace IDs
// and metrics, including these Stats), logrbridge (a logr sink) and encode
// (the formats).
//
// # Writing an output
//
// NewHandler's output is any io.Writer; the optional interfaces it may
// also implement are how the handler talks to it: BatchWriter (whole
// batches; filesink.File), Syncer (Flush, Close and records at or above
// Options.SyncLevel), Closer (an output that retries over the network:
// told when Close begins, never waited for on a caller's goroutine;
// otlpsink.Sink), Reporter (its own events reach Options.OnError) and
// Backlogger (how many records wait behind the batch in its hands).
//
// Write receives one or more whole records, each ending in '\n'. An
// output with WriteBatch receives batches through it instead: each slice
// is one whole record, and the slices are valid only during the call
// (they alias the ring). WriteBatch returns how many leading records it
// wrote completely; when it fails part-way through a record it completes
// that record or cuts it back, and returns the error. A failing Write or
// WriteBatch is retried with back-off (Options.Retry.Attempts) and its
// error reported to Options.OnError. The handler never makes two of these
// calls at once; they all come from the drainer goroutine. A Name() string method
// names the output in error reports (filesink.File's Path() string serves
// as its name).
//
// An output with its own encoding (OTLP, the journal's fields, a Loki or
// Kafka message) gives OpenWithEncoder an Encoder, which encodes every
// record on the caller's goroutine (see its example). Front ends other
// than slog.Logger reach the handler through Handler.HandleAttrs
// (attributes without a slog.Record), Handler.HandleEncoded (a record
// another logger encoded), Handler.Sync and Handler.WithWaitContext.
// otlpsink, journald, otelbridge and logwriter are built on these alone.
package asyncbus
