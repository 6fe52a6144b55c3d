package asyncbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// Encoder encodes records into an output's own format, on the caller's
// goroutine. Implementations are immutable: WithAttrs and WithGroup return
// new encoders, and AppendRecord may be called concurrently.
//
// An Encoder carries Options.Features.Sequence's numbers in its own
// encoding when it also has these methods (OpenWithEncoder refuses
// Sequence otherwise; the journald and otlpsink encoders have them). The
// handler calls those of the Encoder given to OpenWithEncoder, not of
// those its WithAttrs and WithGroup return:
//
//	AppendSequence(dst, rec []byte, seq uint64, run string) (head []byte, skip int)
//	AppendDropMarker(dst []byte, t time.Time, n uint64) []byte
//
// AppendSequence appends to dst the head that takes the place of the
// first skip bytes of rec, so that the record carries sequence number seq
// and run identity run (Stats.RunID), and returns it with skip. rec is a
// record AppendRecord or AppendDropMarker wrote; for any other (a line
// passed to Handler.HandleEncoded, a drop marker in Options.Format) it
// returns a nil head, and that record is written as it is and takes no
// number. The head may be at most 64 bytes longer than skip (the room
// every record is encoded behind): a record whose head is longer, or
// whose AppendSequence panics, is written without a number and takes
// none, and OnError is told once. Calls come one at a time, in the order
// records are written, from the handler's writer goroutine.
//
// AppendDropMarker appends a record saying that n records were lost at
// this point, at time t, in the output's encoding. The handler numbers it
// with AppendSequence: its number is the first lost record's, and the next
// record's is n above it. If it panics, the handler writes its drop marker
// in Options.Format instead, unnumbered.
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
// refuses a nil enc, Options.Features.FlightRecorder, which keeps records
// in the handler's own format, and Options.Features.Sequence unless enc
// has the sequence methods (see Encoder) and no Options.Ring.File is set
// (its replay numbers records in the handler's own formats only).
func OpenWithEncoder(w io.Writer, enc Encoder, opts *Options) (*Handler, error) {
	switch {
	case enc == nil:
		return nil, errors.New("asyncbus: OpenWithEncoder with a nil Encoder")
	case opts != nil && opts.Features.FlightRecorder != nil:
		return nil, errors.New("asyncbus: Options.Features.FlightRecorder is not available with an output's own Encoder")
	case opts != nil && opts.Features.Sequence && !isSequenceEncoder(enc): // sequence.go
		return nil, fmt.Errorf("asyncbus: Options.Features.Sequence needs an Encoder with the AppendSequence and AppendDropMarker methods, and %T has not", enc)
	case opts != nil && opts.Features.Sequence && opts.Ring.File != "":
		return nil, errors.New("asyncbus: Options.Features.Sequence with Options.Ring.File is not available with an output's own Encoder yet")
	}
	h, err := newHandler(w, opts, true, enc)
	if err != nil {
		return nil, err
	}
	h.plug(enc) // before h is shared
	return h, nil
}
