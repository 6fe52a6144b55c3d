package bus

import (
	"errors"

	"github.com/asyncbus/asyncbus/internal/seqnum"
)

// errSeqEncodedRingFile is New's answer to seqnum.Encoded with RingFile.
var errSeqEncodedRingFile = errors.New("sequence numbers in an output's own encoding are not supported with a ring file yet")

// RunID is the run identity written with the numbers (Config.Sequence).
func (b *Bus) RunID() string { return b.seq.Run }

// initSeq sets up Config.Sequence's numbering. With a ring file, records
// the file holds are replayed first with the numbers of the run that
// accepted them (the ring file package); this run starts at 1 either way.
func (b *Bus) initSeq(cfg Config) error {
	if cfg.Sequence == seqnum.Off {
		return nil
	}
	if cfg.Sequence == seqnum.Encoded && cfg.RingFile != "" {
		return errSeqEncodedRingFile // the replay writes prefixes in the JSON and key=value formats only
	}
	b.seq = seqnum.State{Format: cfg.Sequence, Run: cfg.RunID, Next: 1, Enc: seqnum.Encoder{Fn: cfg.SeqEncode, Report: b.Report}}
	if len(b.seq.Run) != seqnum.RunIDLen {
		b.seq.Run = seqnum.NewRunID()
	}
	return nil
}
