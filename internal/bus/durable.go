package bus

// The durable ring (Config.RingFile): the ring in a memory-mapped file that
// survives kill -9. The file, its format, its cursors, recovery and the
// replay's guarded output calls are the ring file package's; this file is
// what the bus gives it: the header word's layout (Layout.Decode) and the
// numbering (seqnum.Replay).

import (
	"unsafe"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
)

// ErrRingLocked is returned (wrapped) by New when the ring file is locked by
// another process (or by another Bus in this one).
var ErrRingLocked = ringfile.ErrLocked

// sumShift is where a file-backed ring's header word keeps its record's
// checksum (ringfile.Sum): bits 32..60, spare in the layout (ring.go), so
// the producer's commit stays one store and lenMask readers are unaffected.
const sumShift = 32

// The ring file's bounds must hold the bus's: the capacity it declares and
// the checksum bits between the length and the flags. Each line fails to
// compile (a negative constant converted to uint64) if they do not.
const (
	_ = uint64(ringfile.MaxCapacity - MaxCapacity)
	_ = uint64(MinCapacity - ringfile.MinCapacity)
	_ = uint64(61 - sumShift - ringfile.SumBits)
	_ = uint64(seqnum.RunIDLen - ringfile.RunIDLen)
	_ = uint64(ringfile.RunIDLen - seqnum.RunIDLen)
)

// durableSum is the checksum a producer commits in a file-backed ring: of the
// line after the headroom when records carry numbers (seq), else of it all.
func durableSum(p []byte, seq bool) uint64 {
	if seq {
		return ringfile.Sum(p, seqnum.Room)
	}
	return ringfile.Sum(p, 0)
}

// ringLayout tells the ring file how this package's header words read.
var ringLayout = ringfile.Layout{Decode: decodeHeader, MaxInline: maxInline}

// decodeHeader reads header word w for the ring file's recovery scan.
func decodeHeader(w uint64) (k ringfile.Kind, n, sum uint64) {
	n, sum = w&lenMask, (w>>sumShift)&(1<<ringfile.SumBits-1)
	switch w & (flagCommit | flagPadding | flagOversize) {
	case 0, flagPadding, flagOversize, flagPadding | flagOversize:
		return ringfile.Free, n, sum
	case flagCommit:
		return ringfile.Record, n, sum
	case flagCommit | flagOversize:
		return ringfile.Oversize, n, sum
	case flagCommit | flagPadding:
		return ringfile.Padding, n, sum
	}
	return ringfile.Malformed, n, sum
}

// openRing maps cfg.RingFile as the ring of b, after replaying what it holds
// to the output (New calls it before the drainer starts, so nothing new can be
// accepted before the replay is done).
func (b *Bus) openRing(cfg Config) error {
	o := ringfile.Options{
		Path:      cfg.RingFile,
		Capacity:  b.capacity,
		MaxBatch:  b.maxBatch,
		Layout:    ringLayout,
		Numbering: seqnum.Replay{Mark: b.dropMarker},
		Room:      seqnum.Room,
		Warn: func(err error) {
			if b.onError == nil {
				return
			}
			defer func() { _ = recover() }() // a panicking callback must not fail New
			b.onError(err)
		},
	}
	o.SetOutput(b.w) // the output's calls, each guarded against a panic
	if cfg.outputPosition != nil {
		o.Position, o.Cut = cfg.outputPosition, nil // a test's: a copy stands for the file that crashed
	}
	if b.seq.On() {
		o.Run = ringfile.Run{Format: uint8(b.seq.Format), ID: b.seq.Run}
	}
	r, res, err := ringfile.Open(o)
	if err != nil {
		return err
	}
	b.file = r
	b.mem = r.Ring()
	b.base = unsafe.Pointer(&b.mem[0]) // page-aligned mapping: 8-byte aligned
	b.recovered, b.unrecovered = res.Recovered, res.Unrecovered
	return nil
}
