// Package core is the typed seam between the root handler (package
// asyncbus) and the module's bridges and sinks (otelbridge, otlpsink,
// logwriter): the root registers its entry points at init, each typed by
// the slog.Handler it acts on, so that the root's public API does not grow
// for them.
package core

import (
	"context"
	"log/slog"
	"time"
)

// Encoder encodes records on the caller's goroutine. Implementations are
// immutable: WithAttrs and WithGroup return new encoders and AppendRecord
// may be called concurrently.
type Encoder interface {
	// WithAttrs returns an encoder whose records carry attrs (encoded once,
	// here), inside the groups opened so far.
	WithAttrs(attrs []slog.Attr) Encoder
	// WithGroup returns an encoder that puts later attributes in group name.
	WithGroup(name string) Encoder
	// AppendRecord appends r, encoded as one whole bus record, to dst.
	// name is the logger name given by Handler.Named, or empty; extra are
	// top-level attributes from the handler's Options.Context hook (valid
	// only during the call). ctx may be nil.
	AppendRecord(dst []byte, ctx context.Context, r slog.Record, name string, extra []slog.Attr) []byte
}

// Closer is implemented by outputs that want to know when the handler's
// Close begins, and with what deadline (e.g. to stop retrying). A handler
// never waits for such an output on a caller's goroutine (no write-through,
// no Error wait): it retries over the network.
type Closer interface {
	// Closing returns when the output will have given up its last call:
	// the handler's Close waits that long (and a little more) when its
	// context has no deadline.
	Closing(ctx context.Context) (giveUpAt time.Time)
}

// Reporter is implemented by outputs that report their own events
// (retries, partial successes) to the handler's OnError: the handler gives
// them a report function that delivers through its bus's reporter,
// serially with the bus's own reports, and that Close waits for.
type Reporter interface {
	// SetReport gives the output report, which returns false (taking
	// nothing) once the handler has closed: the output then delivers the
	// report itself.
	SetReport(report func(error) bool)
}

// Backlogger is implemented by outputs that report how many records
// waited for them (otlpsink's recovery report): the handler gives them a
// function that counts the records queued behind the batch in the
// output's hands, to be called only from within the output's write call.
type Backlogger interface {
	SetBacklog(backlog func() uint64)
}

// Root is the root package's entry points; every one takes an
// *asyncbus.Handler as a slog.Handler and reports (or returns nil) when
// given another handler.
type Root struct {
	// Install makes h, an *asyncbus.Handler just opened and not yet
	// shared, encode its records with enc, and connects its output's
	// Closer, Reporter and Backlogger, if it has them.
	Install func(h slog.Handler, enc Encoder) error
	// Bound returns a copy of h whose waits for the output end when ctx
	// ends (a record waiting for room is dropped and counted, a wait for
	// a write or sync returns ctx's error with the record queued), or nil.
	Bound func(h slog.Handler, ctx context.Context) slog.Handler
	// Grouped reports whether h has an open group (WithGroup applied),
	// so that attributes do not land at the top level.
	Grouped func(h slog.Handler) bool
	// HandleAttrs is Handle for a record made of t, level, msg and attrs,
	// without building a slog.Record (which allocates beyond five
	// attributes); attrs are not retained. ok is false, and nothing is
	// done, if h is not an *asyncbus.Handler.
	HandleAttrs func(h slog.Handler, ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) (ok bool, err error)
	// WriteLine enqueues a copy of line, a record another logger encoded,
	// at level, with the waits a record at that level gets from Handle
	// (logwriter). ok is false, and nothing is done, if h is not an
	// *asyncbus.Handler.
	WriteLine func(h slog.Handler, level slog.Level, line []byte) (ok bool, err error)
	// SyncBounded writes and syncs every record enqueued before the call,
	// within the bounds of a SyncLevel record's wait (logwriter's Sync).
	SyncBounded func(h slog.Handler) error
}

// root is set once, by package asyncbus's init, before any importer of
// asyncbus runs: no synchronisation is needed to read it.
var root Root

// Register sets the root's entry points (package asyncbus's init).
func Register(r Root) { root = r }

// Install: see Root.Install.
func Install(h slog.Handler, enc Encoder) error { return root.Install(h, enc) }

// Bound: see Root.Bound.
func Bound(h slog.Handler, ctx context.Context) slog.Handler { return root.Bound(h, ctx) }

// Grouped: see Root.Grouped.
func Grouped(h slog.Handler) bool { return root.Grouped(h) }

// WriteLine: see Root.WriteLine.
func WriteLine(h slog.Handler, level slog.Level, line []byte) (bool, error) {
	return root.WriteLine(h, level, line)
}

// SyncBounded: see Root.SyncBounded.
func SyncBounded(h slog.Handler) error { return root.SyncBounded(h) }

// HandleAttrs: see Root.HandleAttrs.
func HandleAttrs(h slog.Handler, ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) (bool, error) {
	return root.HandleAttrs(h, ctx, t, level, msg, attrs)
}
