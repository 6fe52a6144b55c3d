package asyncbus

import (
	"context"
	"time"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/seqnum"
)

// sequenceEncoder is an Encoder with the optional methods that carry
// Options.Features.Sequence's numbers in the output's own encoding (see
// Encoder).
type sequenceEncoder interface {
	Encoder
	AppendSequence(dst, rec []byte, seq uint64, run string) (head []byte, skip int)
	AppendDropMarker(dst []byte, t time.Time, n uint64) []byte
}

// isSequenceEncoder reports whether enc carries the numbers itself.
func isSequenceEncoder(enc Encoder) bool {
	_, ok := enc.(sequenceEncoder)
	return ok
}

// outputHooks are the functions the bus calls back into the handler's
// encoding with: the drop marker and, for an output's own Encoder with
// the sequence methods and Options.Features.Sequence, its numbering.
type outputHooks struct {
	dropMarker func([]byte, uint64) []byte
	seqEncode  seqnum.Encode
}

// busHooks returns the hooks for validated options o, the handler's
// encoder enc (made with encOpts) and the output's own Encoder own (nil
// when none): an own Encoder with the sequence methods writes the numbers
// and the drop markers that carry them.
func busHooks(o *Options, enc *encode.Encoder, encOpts encode.Options, own Encoder) outputHooks {
	h := outputHooks{dropMarker: dropMarker(enc, encOpts)}
	if se, ok := own.(sequenceEncoder); ok && o.Features.Sequence {
		h.dropMarker = seqDropMarker(se, h.dropMarker)
		h.seqEncode = se.AppendSequence
	}
	return h
}

// seqDropMarker is se's drop marker, or, if se panics on it, format's.
func seqDropMarker(se sequenceEncoder, format func([]byte, uint64) []byte) func([]byte, uint64) []byte {
	return func(dst []byte, n uint64) (out []byte) {
		defer func() {
			if recover() != nil {
				out = format(dst[:0], n)
			}
		}()
		return se.AppendDropMarker(dst, time.Now(), n)
	}
}

// seqFormat is how records carry Options.Features.Sequence's number and
// run identity: written by the output's own encoder (seqEncode, not nil
// for a sequenceEncoder), the first keys of a JSON object, or seq= and
// run= pairs at the start of every other format's line.
func seqFormat(o *Options, seqEncode seqnum.Encode) seqnum.Format {
	switch f := o.Format; {
	case !o.Features.Sequence:
		return seqnum.Off
	case seqEncode != nil:
		return seqnum.Encoded
	case f == JSON, f&0xff == encode.ZapJSON, f == encode.GCPJSON, f == encode.ECSJSON, f == encode.DatadogJSON:
		return seqnum.JSON
	default:
		return seqnum.KV
	}
}

// withSeqRoom returns the record p in b.data behind seqnum.Room bytes of
// headroom, where the bus writes the line's number (Options.Features.Sequence):
// p is b.data, moved up in place, or a line another logger encoded
// (HandleEncoded), copied in behind the room.
func (h *Handler) withSeqRoom(b *buffer, p []byte) []byte {
	if len(p) > 0 && len(b.data) > 0 && &p[0] == &b.data[0] {
		n := len(p)
		b.data = append(b.data, make([]byte, seqnum.Room)...) // no allocation while cap suffices
		copy(b.data[seqnum.Room:], b.data[:n])
	} else {
		b.data = append(append(b.data[:0], make([]byte, seqnum.Room)...), p...)
	}
	b.room = seqnum.Room
	return b.data
}

// addSeqStats sets Stats.RunID.
func (c *tree) addSeqStats(s *Stats) {
	if c.seq {
		s.RunID = c.bus.RunID()
	}
}

// endRun enqueues, at the first Close of a handler whose records carry
// numbers in the JSON or key=value form, the request for the run-end line
// (seqnum.RunEndSentinel): the drainer writes in its place the run identity
// and the count of numbers given out, after every record enqueued before
// it. It waits for room no longer than ctx (Close's bound); where a full
// ring drops instead (Drop, BlockTimeout) it first waits for the records
// queued to be written, as a SyncLevel record does (at most 5 s, not at
// all while the output is stuck). A line that still finds no room is
// dropped and counted like a record, and -check then reports the run as
// ended without Close. Stats count the line as a record.
func (c *tree) endRun(ctx context.Context) {
	if !c.runEnd.Swap(false) { // atomic: one Close writes it, however many run
		return
	}
	if c.runEndRoom {
		_ = c.bus.SyncBounded(ctx) // its failures are Close's to report: Sync moves no mark
	}
	p := make([]byte, seqnum.Room+len(seqnum.RunEndSentinel)+seqnum.RunEndRoom)
	copy(p[seqnum.Room:], seqnum.RunEndSentinel)
	_ = c.bus.EnqueueUntil(ctx, p) // ErrClosed, ErrDropped: counted by the bus
}
