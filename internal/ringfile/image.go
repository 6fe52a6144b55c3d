package ringfile

import (
	"encoding/binary"
	"hash/crc32"
)

// Crash images: what a ring file holds when its process died, built by hand
// (tests of the bus's recovery, tools) and checked as Open checks them.

// HeaderSize is the size of a ring file's header: its ring starts there.
const HeaderSize = ringHeaderSize

// Version is the format version this build writes; Version1 has no
// sequence slots (still opened).
const (
	Version  = ringVersion
	Version1 = ringVersion1
)

// State is a ring file's current state as a crash leaves it (see the
// format at the top of ringfile.go).
type State struct {
	Head, Zeroed, End, Pre uint64 // the drainer's cursors
	Size                   int64  // the output's size before the batch in flight (-1: unknown)
	Dev, Ino               uint64 // the output's device and inode, with Size
	SeqNext, SeqMark       uint64 // the sequence slot: the number at Head, a marker's count
	SeqFormat              uint8
	SeqRun                 [RunIDLen]byte
}

// Header returns the header page of a ring file in format version (Version
// or Version1, which gets no sequence slots) for a ring of capacity bytes,
// whose current state is st.
func Header(capacity uint64, version uint32, st State) []byte {
	h := make([]byte, ringHeaderSize)
	copy(h, staticHeader(capacity))
	if version != ringVersion {
		binary.LittleEndian.PutUint32(h[8:], version)
		binary.LittleEndian.PutUint32(h[ringStaticCRC:], crc32.Checksum(h[:ringStaticCRC], castagnoli))
	}
	s := ringState{head: st.Head, zeroed: st.Zeroed, end: st.End, pre: st.Pre, size: st.Size, dev: st.Dev, ino: st.Ino,
		seqNext: st.SeqNext, seqMark: st.SeqMark, seqFmt: st.SeqFormat, seqRun: st.SeqRun}
	w := s.words()
	for i, v := range w {
		binary.LittleEndian.PutUint64(h[ringSlot0+8*i:], v)
	}
	binary.LittleEndian.PutUint64(h[ringSlot0+56:], stateCRC(w))
	if version == ringVersion {
		sw := s.seqWords()
		for i, v := range sw {
			binary.LittleEndian.PutUint64(h[ringSeqSlot0+8*i:], v)
		}
		binary.LittleEndian.PutUint64(h[ringSeqSlot0+8*seqSlotWords:], seqCRC(sw))
	}
	return h
}

// Check validates a whole ring file image as Open does (n: the numbering
// whose formats are trusted): nil if Open would recover from it.
func Check(data []byte, n Numbering) error {
	_, err := parseImage(data, &Options{Numbering: n})
	return err
}
