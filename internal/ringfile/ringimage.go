package ringfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Kind is what a header word of the bus's layout says its entry is.
type Kind uint8

const (
	// Free: no commit bit: free space, a reservation never committed, or
	// a dead reservation's payload.
	Free Kind = iota
	// Record: a committed inline record; the length is its payload's.
	Record
	// Oversize: a committed reference to a record on the heap (not
	// durable); the length is the record's.
	Oversize
	// Padding: committed padding up to the ring's end; the length is its own.
	Padding
	// Malformed: a commit bit with flags the layout does not have.
	Malformed
)

// Layout is how the bus's ring encodes its entries, which the file keeps but
// does not define. Entries start on 8-byte boundaries with one 8-byte
// header word: an inline record's payload follows it, padded to 8 bytes; an
// oversize reference is the header word alone; padding fills the ring to
// its end.
type Layout struct {
	// Decode reads header word w: its kind, length and checksum field (the
	// SumBits-bit Sum the producer committed; 0 for padding and references).
	Decode func(w uint64) (k Kind, n, sum uint64)
	// MaxInline is the longest inline payload.
	MaxInline uint64
}

// hdrSize is the size of a header word.
const hdrSize = 8

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// ringImage is a validated view of a ring file's bytes.
type ringImage struct {
	capacity uint64
	mask     uint64
	st       ringState
	gen      uint64
	version  uint32
	seq      uint8 // records carry headroom for numbers in this format (ringseq.go)
	ring     []byte
	o        *Options // the layout and numbering
}

// errUninitialized: the header is all zero (a file created but never
// initialised, e.g. a crash right after creation).
var errUninitialized = errors.New("uninitialized")

// parseImage validates a whole ring file image. Any error means the file
// cannot be trusted at all.
func parseImage(data []byte, o *Options) (*ringImage, error) {
	if len(data) < ringHeaderSize {
		return nil, fmt.Errorf("file is %d bytes, shorter than the %d-byte header", len(data), ringHeaderSize)
	}
	hdr := data[:ringHeaderSize]
	if isZero(hdr) {
		return nil, errUninitialized
	}
	if string(hdr[:8]) != ringMagic {
		return nil, fmt.Errorf("bad magic %q: not an asyncbus ring file", hdr[:8])
	}
	version := binary.LittleEndian.Uint32(hdr[8:])
	if version != ringVersion && version != ringVersion1 {
		return nil, fmt.Errorf("format version %d, this build reads versions %d and %d", version, ringVersion1, ringVersion)
	}
	if got, want := binary.LittleEndian.Uint32(hdr[ringStaticCRC:]), crc32.Checksum(hdr[:ringStaticCRC], castagnoli); got != want {
		return nil, fmt.Errorf("header checksum %08x, want %08x", got, want)
	}
	if hs := binary.LittleEndian.Uint32(hdr[12:]); hs != ringHeaderSize {
		return nil, fmt.Errorf("header size %d, want %d", hs, ringHeaderSize)
	}
	capacity := binary.LittleEndian.Uint64(hdr[16:])
	if capacity < MinCapacity || capacity > MaxCapacity || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("capacity %d is not a power of two in [%d, %d]", capacity, MinCapacity, MaxCapacity)
	}
	if uint64(len(data)-ringHeaderSize) != capacity {
		return nil, fmt.Errorf("file is %d bytes, the header says %d", len(data), ringHeaderSize+capacity)
	}
	gen := binary.LittleEndian.Uint64(hdr[ringGeneration:])
	slot := hdr[ringSlot0+ringSlotSize*int(gen&1):][:ringSlotSize]
	var w [7]uint64
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(slot[8*i:])
	}
	if got := binary.LittleEndian.Uint64(slot[56:]); got != stateCRC(w) {
		return nil, fmt.Errorf("state checksum %08x, want %08x", got, stateCRC(w))
	}
	st := ringState{head: w[0], zeroed: w[1], end: w[2], pre: w[3], size: int64(w[4]), dev: w[5], ino: w[6]}
	if version == ringVersion && !parseSeqSlot(hdr, gen, &st, o.Numbering) {
		return nil, errors.New("sequence slot checksum or format does not match")
	}
	// Cursors: multiples of 8 with zeroed <= head <= end <= zeroed+capacity.
	if (st.head|st.zeroed|st.end)&7 != 0 || st.zeroed > st.head || st.head > st.end ||
		st.end-st.zeroed > capacity || st.zeroed > 1<<62 {
		return nil, fmt.Errorf("cursors do not add up: head %d, zeroed %d, end %d, capacity %d", st.head, st.zeroed, st.end, capacity)
	}
	if st.size < unknownOutputSize {
		return nil, fmt.Errorf("output size %d", st.size)
	}
	return &ringImage{capacity: capacity, mask: capacity - 1, st: st, gen: gen, version: version, seq: st.seqFmt, ring: data[ringHeaderSize:], o: o}, nil
}

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// entryKind is what a scanned ring entry is.
type entryKind uint8

const (
	entRecord   entryKind = iota // inline record: data is its payload
	entOversize                  // reference to a heap record (not durable); size is its length
	entPadding                   // wrap padding
)

type ringEntry struct {
	pos, end uint64 // ring positions of the entry
	kind     entryKind
	data     []byte // entRecord: the payload (aliases the image); numbered: the line written
	size     uint64 // payload bytes the drainer writes for it (entOversize: unknownSize = unknown)
	restore  bool   // a number's prefix replaced the line's first byte, which was first (sumMatches)
	first    byte
	took     bool // it took a sequence number (numberEntry)
}

// next returns the first valid entry at or after pos and ending at or before
// limit, and how many damaged entries it skipped. pos must be an entry
// boundary: head, or the end of an entry next returned.
//
// Entries are contiguous, so the word at a boundary is a header: zero (a
// reservation never committed, or free space) or a committed header. A
// committed-looking word there that is not a valid entry is damage, counted
// once. Past a zero header the scan is inside a dead reservation, whose
// length nobody recorded: it steps word by word through the payload the
// dead producer had copied (any bytes, e.g. UTF-8 text whose words have the
// top bit set) until the next valid entry, and none of those words is damage,
// whatever they look like. A damaged header is likewise counted once, not
// once per word of its payload.
func (im *ringImage) next(pos, limit uint64) (e ringEntry, damaged int, ok bool) {
	boundary := true // pos is where an entry starts
	for ; pos < limit; pos, boundary = pos+8, false {
		off := pos & im.mask
		w := binary.LittleEndian.Uint64(im.ring[off:])
		k, n, sum := im.o.Layout.Decode(w)
		switch k {
		case Free:
			continue // free space, a reservation never committed, or its payload
		case Padding:
			if sum == 0 && n == im.capacity-off && n <= limit-pos {
				return ringEntry{pos: pos, end: pos + n, kind: entPadding}, damaged, true
			}
		case Oversize:
			if sum == 0 && limit-pos >= hdrSize {
				return ringEntry{pos: pos, end: pos + hdrSize, kind: entOversize, size: n}, damaged, true
			}
		case Record:
			need := align8(hdrSize + n)
			if n <= im.o.Layout.MaxInline && need <= im.capacity-off && need <= limit-pos {
				p := im.ring[off+hdrSize : off+hdrSize+n]
				if ok, first := im.sumMatches(p, sum); ok {
					e := ringEntry{pos: pos, end: pos + need, kind: entRecord, data: p, size: n}
					if first >= 0 {
						e.restore, e.first = true, byte(first)
					}
					return e, damaged, true
				}
			}
		}
		if boundary {
			damaged++
		}
	}
	return ringEntry{}, damaged, false
}
