package asyncbus

import (
	"context"
	"log/slog"
	"time"
)

// The entry points of front ends other than slog.Logger: bridges from
// other logging APIs (otelbridge, logwriter) reach the handler through
// these methods, as a third party's would.

// HandleAttrs is Handle for a record made of t, level, msg and attrs,
// without building a slog.Record (which allocates beyond five
// attributes): the output is Handle's for such a record, with PC 0 (no
// source), and so are the waits and the result. attrs are not retained.
func (h *Handler) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	return h.handleAttrs(ctx, t, level, msg, attrs)
}

// HandleEncoded enqueues a copy of record, a record another logger has
// already encoded, at level: it is counted per level in Stats and written
// as given, and it waits as a record at that level does in Handle (an
// Error record for its write, a SyncLevel record for its sync). It returns
// what Handle returns.
func (h *Handler) HandleEncoded(level slog.Level, record []byte) error {
	return h.writeLine(level, record)
}

// Sync writes and syncs every record handled before the call, waiting as a
// record at Options.SyncLevel does: at most 5 seconds, and not at all while
// the output is stuck; then it returns an error matching
// context.DeadlineExceeded and the records stay queued. Otherwise it
// returns the output's error, as Flush does.
func (h *Handler) Sync() error {
	return h.syncBounded(context.Background())
}

// WithWaitContext returns a copy of h whose waits for the output end when
// ctx ends: a record waiting for room in the ring is dropped, counted and
// marked (Handle returns ErrDropped), and a wait for an Error record's
// write or a SyncLevel record's sync returns ctx's error with the record
// queued. A handler made by NewHandler has no such bound: a request's
// context must not cost it its lines.
func (h *Handler) WithWaitContext(ctx context.Context) *Handler {
	h2 := *h
	h2.bound = ctx
	return &h2
}

// Grouped reports whether WithGroup opened a group on h, so that
// attributes handed to it do not land at the top level.
func (h *Handler) Grouped() bool { return h.grouped }
