package ringfile

// Sequence numbers with the durable ring (the bus's numbering, Options.Run
// and Options.Numbering).
//
// Numbers follow ring order from head (seq.go): the drainer numbers entries
// as it collects them, a drop marker takes its gap's numbers in front of the
// batch it opens. So the file need not keep each record's number: the
// sequence slot keeps the number at head (seqNext), with the count of the
// marker opening the batch in flight (seqMark), and the run identity and
// format. written stores the number the next record gets with the new head;
// begin stores the marker's count. Recovery numbers the records it finds
// from there, in ring order, as the dead drainer did or would have: a
// record the dead drainer numbered (and maybe wrote) gets the same number
// again, one it had not collected the number after. A marker of the batch in
// flight that the output does not hold whole is written again, with its
// numbers; so is one for oversize records (their bytes were on the heap),
// which took numbers they can no longer carry. Then the bus starts its own
// run from 1, with its own identity.
//
// The drainer writes each number into the record's headroom in the ring,
// after the producer's commit: the record's checksum leaves the headroom
// out (Sum's room). A prefix may replace the one byte after the headroom (a
// JSON one replaces the line's opening brace), so recovery also accepts a
// record whose first line byte is the end of a prefix if it matches with
// that byte back (Numbering.Replaced).
//
// No atomic for the numbering: the drainer passes its next number to
// Written on its own goroutine, which owns the numbering; recovery runs in Open, before the
// bus's drainer starts.
//
// Sequence slot (64 bytes, little-endian): next, mark, format, the run
// identity's 16 bytes (two words), then CRC-32C of those five words.

import (
	"encoding/binary"
	"hash/crc32"
	"sync/atomic"
)

const seqSlotWords = 5

// Numbering is the bus's sequence numbering, as recovery needs it to
// replay a dead run's records with their numbers: the file keeps only a
// run's format, identity and next number.
type Numbering interface {
	// Replayable reports whether records numbered in format (not 0) can be
	// replayed with their numbers.
	Replayable(format uint8) bool
	// Number writes number n of run id in format into the Room bytes of
	// headroom that start rec, as the drainer does, and returns the line to
	// write (from the prefix on).
	Number(format uint8, id string, n uint64, rec []byte) []byte
	// Replaced returns the byte a prefix in format overwrote at the start of
	// line (a JSON object's brace), if line, as the drainer left it, can be
	// one whose start a prefix overwrote; ok is false otherwise.
	Replaced(format uint8, line []byte) (b byte, ok bool)
	// Marker returns the drop marker line for the n numbers from first of
	// run id in format, or nil for none.
	Marker(format uint8, id string, first, n uint64) []byte
}

// numbering is a run's numbering as recovery and Written keep it.
type numbering struct {
	format uint8  // 0: no numbers
	run    string // RunIDLen bytes
	next   uint64 // the number the next record gets
}

func (s *numbering) on() bool { return s.format != 0 }

// seqWords returns the sequence slot's words of s.
func (s *ringState) seqWords() [seqSlotWords]uint64 {
	return [seqSlotWords]uint64{
		s.seqNext, s.seqMark, uint64(s.seqFmt),
		binary.LittleEndian.Uint64(s.seqRun[:8]), binary.LittleEndian.Uint64(s.seqRun[8:]),
	}
}

func seqCRC(w [seqSlotWords]uint64) uint64 {
	var b [8 * seqSlotWords]byte
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return uint64(crc32.Checksum(b[:], castagnoli))
}

// storeSeqSlot fills the sequence slot at off with s's numbering. Like the
// state slot it goes with, it is not current until the generation store
// that follows. Without numbers the slot is written only until it holds
// the empty numbering (seqBlank), so a ring file without Sequence pays
// nothing per batch for it.
func (r *File) storeSeqSlot(off int, s ringState) {
	i := (off - ringSeqSlot0) / ringSlotSize
	blank := s.seqNext|s.seqMark == 0 && s.seqFmt == 0 && s.seqRun == [RunIDLen]byte{}
	if blank && r.seqBlank[i] {
		return // it holds exactly these words already
	}
	r.seqBlank[i] = blank
	w := s.seqWords()
	for i, v := range w {
		atomic.StoreUint64(r.word(off+8*i), v) // atomic, row sequence slots
	}
	atomic.StoreUint64(r.word(off+8*seqSlotWords), seqCRC(w)) // atomic, row sequence slots
}

// emptyState is the state of an empty ring: with the numbering r persists,
// its run's identity and format, and 1 for the next record.
func (r *File) emptyState() ringState {
	var s ringState
	if r.seq != nil && r.seq.on() {
		s.seqNext, s.seqFmt = 1, r.seq.format
		copy(s.seqRun[:], r.seq.run)
	}
	return s
}

// parseSeqSlot reads the sequence slot that goes with generation gen into st.
// A format the bus cannot replay (nm nil, or not Replayable) is not trusted.
func parseSeqSlot(hdr []byte, gen uint64, st *ringState, nm Numbering) bool {
	slot := hdr[ringSeqSlot0+ringSlotSize*int(gen&1):][:ringSlotSize]
	var w [seqSlotWords]uint64
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(slot[8*i:])
	}
	if binary.LittleEndian.Uint64(slot[8*seqSlotWords:]) != seqCRC(w) || w[2] > 255 ||
		(w[2] != 0 && (nm == nil || !nm.Replayable(uint8(w[2])))) {
		return false
	}
	st.seqNext, st.seqMark, st.seqFmt = w[0], w[1], uint8(w[2])
	binary.LittleEndian.PutUint64(st.seqRun[:8], w[3])
	binary.LittleEndian.PutUint64(st.seqRun[8:], w[4])
	return true
}

// deadRun returns the numbering of the run that accepted the records the
// state's file holds, as it stands at head (the first record's number).
func (s *ringState) deadRun() numbering {
	return numbering{format: s.seqFmt, run: string(s.seqRun[:]), next: s.seqNext + s.seqMark}
}

// sumMatches reports whether the payload p of a committed record carries the
// checksum sum, and, if it does only with its line's first byte put back to
// the one a number's prefix replaced, that byte (first; -1 if not).
func (im *ringImage) sumMatches(p []byte, sum uint64) (ok bool, first int) {
	if im.seq == 0 {
		return Sum(p, 0) == sum, -1
	}
	room := im.o.Room
	if Sum(p, room) == sum {
		return true, -1
	}
	if len(p) <= room || im.o.Numbering == nil {
		return false, -1
	}
	b, ok := im.o.Numbering.Replaced(im.seq, p[room:])
	if !ok {
		return false, -1
	}
	c := crc32.Update(uint32(len(p)), castagnoli, []byte{b})
	c = crc32.Update(c, castagnoli, p[room+1:])
	if uint64(c)&sumMask != sum {
		return false, -1
	}
	return true, int(b)
}

// numberEntry gives the replayed entry e the number s has next, in place in
// the ring, exactly as the drainer's collect did: a record gets the prefix
// and its data becomes the line written; an oversize reference takes its
// number (its length written is then unknown: the prefix's is not known).
// It reports whether e took a number.
func (r *File) numberEntry(e *ringEntry, s *numbering) bool {
	if !s.on() {
		return false
	}
	switch e.kind {
	case entRecord:
		room := r.o.Room
		if len(e.data) < room {
			return false // the bus does not number it either
		}
		if e.restore {
			e.data[room] = e.first // the line as the producer committed it
			e.restore = false
		}
		e.data = r.o.Numbering.Number(s.format, s.run, s.next, e.data)
		s.next++
		e.size = uint64(len(e.data))
		return true
	case entOversize:
		s.next++
		e.size = unknownSize
		return true
	}
	return false
}

// owedMarker returns the drop marker line for the n numbers from first,
// which the output lacks (nil if the marker hook gives no line or panics):
// recovery writes it in front of the next record.
func (r *File) owedMarker(s *numbering, first, n uint64) (line []byte) {
	if n == 0 || r.o.Numbering == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			line = nil // as the drainer: a marker that panics writes nothing
		}
	}()
	return r.o.Numbering.Marker(s.format, s.run, first, n)
}

// flightNumbers returns the sequence slot after the first j entries of the
// interrupted batch ents reached the output: the number the next record
// gets, or, if the output lacks the drop marker that opened the batch (never
// written, torn, or cut), the marker's first number and count, so replay
// writes it again (then j == 0: no record follows a marker not written).
func flightNumbers(ents []ringEntry, j int, end flightEnd, st ringState, now Position, cutMarker bool) (next, mark uint64) {
	if st.seqMark > 0 && j == 0 && (end == flightExact || end == flightTorn) {
		base := st.size
		if now.Dev != st.dev || now.Ino != st.ino {
			base = 0 // as in flightDone: the output switched files
		}
		if cutMarker || now.Size < base+int64(st.pre) {
			return st.seqNext, st.seqMark
		}
	}
	next = st.seqNext + st.seqMark
	for _, e := range ents[:j] {
		if e.took {
			next++
		}
	}
	return next, 0
}

// lose records an oversize reference ending at end as passed: its number
// (if it took one) joins the owed marker.
func (rp *replayer) lose(end uint64) {
	r := rp.r
	if r.seq == nil {
		r.written(end)
		return
	}
	if rp.owed == 0 {
		rp.owedAt = r.seq.next - 1
	}
	rp.owed++
	r.settle(end, rp.owedAt, rp.owed)
}

// settle persists head at pos with no batch in flight and a drop marker owed
// for the mark numbers from next.
func (r *File) settle(pos, next, mark uint64) {
	s := r.st
	s.head, s.end, s.pre = pos, pos, 0
	s.seqNext, s.seqMark = next, mark
	r.publish(s)
}
