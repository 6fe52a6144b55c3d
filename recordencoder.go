package asyncbus

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

// Encoder encodes records into an output's own format, on the caller's
// goroutine. Implementations are immutable: WithAttrs and WithGroup return
// new encoders, and AppendRecord may be called concurrently.
type Encoder interface {
	// WithAttrs returns an encoder whose records carry attrs (encoded once,
	// here), inside the groups opened so far.
	WithAttrs(attrs []slog.Attr) Encoder
	// WithGroup returns an encoder that puts later attributes in group name.
	WithGroup(name string) Encoder
	// AppendRecord appends r, encoded as one whole record of the output, to
	// dst and returns the extended slice. name is the logger name given by
	// Handler.Named, or empty; extra are top-level attributes from
	// Options.Features.Context, valid only during the call; a stack trace
	// (Options.Features.StackTraceLevel) is r's last attribute, "stacktrace". ctx
	// is the record's context, or nil.
	AppendRecord(dst []byte, ctx context.Context, r slog.Record, name string, extra []slog.Attr) []byte
}

// OpenWithEncoder is Open for an output with its own encoding: enc encodes
// every record the handler writes. The options that shape an encoding
// (Format, AddSource, ReplaceAttr and Options.Encoding) are enc's to
// honour or not; the handler applies them only to its drop markers. It
// refuses a nil enc and Options.Features.FlightRecorder, which keeps
// records in the handler's own format.
func OpenWithEncoder(w io.Writer, enc Encoder, opts *Options) (*Handler, error) {
	switch {
	case enc == nil:
		return nil, errors.New("asyncbus: OpenWithEncoder with a nil Encoder")
	case opts != nil && opts.Features.FlightRecorder != nil:
		return nil, errors.New("asyncbus: Options.Features.FlightRecorder is not available with an output's own Encoder")
	}
	h, err := Open(w, opts)
	if err != nil {
		return nil, err
	}
	h.plug(enc) // before h is shared
	return h, nil
}
