// Package asyncbus is a fast, asynchronous log/slog handler.
//
// Each record is encoded on the caller's goroutine into a pooled buffer (JSON,
// text, logfmt or console), then copied into a lock-free multi-producer ring
// (internal/bus). One drainer goroutine writes the ring to the output in
// large batches, adapting batch size and sleep to the backlog and parking
// when idle. A log call therefore never waits for a lock, a syscall or the
// disk, unless the ring is full and Options.Overflow is Block.
//
//	h := asyncbus.NewHandler(os.Stdout, nil)
//	defer h.Close()
//	slog.SetDefault(slog.New(h))
//
// Nothing accepted is lost silently: records refused because the ring was
// full (Drop mode) or because the handler was closed are counted in Stats,
// and the drainer writes an in-band marker line at the gap saying how many
// records were lost there. One record's work is bounded: past 65,536
// attributes (groups and LogValuers included) or 16 MiB, the attribute at
// hand is written as encode.TruncatedValue and the record's remaining
// attributes are left out; the line shows the cut, Stats does not count it.
//
// Importing asyncbus adds no HTTP routes and pulls in neither net/http nor
// expvar. Related packages: filesink (a rotating log file output), levelhttp
// (per-logger levels over HTTP), otelbridge (OpenTelemetry logs, trace IDs
// and metrics, including these Stats), logrbridge (a logr sink) and encode
// (the formats).
package asyncbus
