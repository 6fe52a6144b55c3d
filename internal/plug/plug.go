// Package plug lets a sink package in this module run its own caller-side
// record encoder inside an asyncbus.Handler without growing the root
// package's public API: the root sets NewHandler in its init, and packages
// such as otlpsink (which import the root, so the init has run) call it.
package plug

import (
	"context"
	"io"
	"log/slog"
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

// Closer is implemented by sinks that want to know when the handler's
// Close begins, and with what deadline (e.g. to stop retrying).
type Closer interface {
	Closing(ctx context.Context)
}

// Bound returns a copy of h, an *asyncbus.Handler, whose waits for the
// output end when ctx ends: a record still waiting for room is dropped and
// counted (asyncbus.ErrDropped), a wait for a record's write or sync
// returns ctx's error with the record queued. It returns nil if h is not
// an *asyncbus.Handler. Set by package asyncbus's init.
var Bound func(h any, ctx context.Context) any

// Reporter is implemented by sinks that report their own events (retries,
// partial successes) to the handler's OnError: the handler gives them a
// report function that delivers through its bus's reporter, serially with
// the bus's own reports, and that Close waits for. Only valid from inside
// the sink's Write, WriteBatch or Sync.
type Reporter interface {
	// SetReport gives the sink report, which returns false (taking
	// nothing) once the handler has closed: the sink then delivers the
	// report itself.
	SetReport(report func(error) bool)
}

// Grouped reports whether h is an *asyncbus.Handler with an open group
// (WithGroup applied), whose attributes therefore do not land at the top
// level. Set by package asyncbus's init.
var Grouped func(h any) bool

// NewHandler builds an *asyncbus.Handler (returned as any) writing to w,
// with opts (an *asyncbus.Options, or nil) and records encoded by enc.
// Like asyncbus.Open, it fails when Options.RingFile cannot be used or its
// replay into w fails. If w implements Closer, the handler's Close calls it
// first. Set by package asyncbus's init.
var NewHandler func(w io.Writer, opts any, enc Encoder) (any, error)
