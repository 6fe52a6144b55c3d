package bus

import (
	"errors"

	"github.com/asyncbus/asyncbus/internal/seqnum"
)

// SeqFormat is how records carry their sequence number and run identity
// (Config.Sequence; seqnum.Format).
type SeqFormat = seqnum.Format

// The formats (see seqnum).
const (
	SeqOff     = seqnum.Off
	SeqJSON    = seqnum.JSON
	SeqKV      = seqnum.KV
	SeqEncoded = seqnum.Encoded
)

// SeqRoom is the headroom, in bytes, in front of every record enqueued on
// a bus with Config.Sequence set.
const SeqRoom = seqnum.Room

// RunIDLen is the length of a run identity.
const RunIDLen = seqnum.RunIDLen

// RunEndSentinel opens the record a handler enqueues at Close to have the
// run-end line written in its place (seqnum.RunEndSentinel).
const RunEndSentinel = seqnum.RunEndSentinel

// RunEndRoom is the room after RunEndSentinel for the run-end line.
const RunEndRoom = seqnum.RunEndRoom

// NewRunID returns a random run identity.
func NewRunID() string { return seqnum.NewRunID() }

// SeqEncode writes a record's number in an output's own encoding
// (SeqEncoded; seqnum.Encode).
type SeqEncode = seqnum.Encode

// errSeqEncodedRingFile is New's answer to SeqEncoded with RingFile.
var errSeqEncodedRingFile = errors.New("sequence numbers in an output's own encoding are not supported with a ring file yet")

// RunID is the run identity written with the numbers (Config.Sequence).
func (b *Bus) RunID() string { return b.seq.Run }

// initSeq sets up Config.Sequence's numbering. With a ring file, records
// the file holds are replayed first with the numbers of the run that
// accepted them (the ring file package); this run starts at 1 either way.
func (b *Bus) initSeq(cfg Config) error {
	if cfg.Sequence == SeqOff {
		return nil
	}
	if cfg.Sequence == SeqEncoded && cfg.RingFile != "" {
		return errSeqEncodedRingFile // the replay writes prefixes in the JSON and key=value formats only
	}
	b.seq = seqnum.State{Format: cfg.Sequence, Run: cfg.RunID, Next: 1, Enc: seqnum.Encoder{Fn: cfg.SeqEncode, Report: b.Report}}
	if len(b.seq.Run) != RunIDLen {
		b.seq.Run = NewRunID()
	}
	return nil
}
