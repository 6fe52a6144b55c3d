package bus

// Sequence numbers with the durable ring (Config.Sequence with
// Config.RingFile).
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
// out (seqRecordSum). A JSON prefix replaces the line's opening brace, the
// one byte after the headroom, so recovery also accepts a record whose first
// line byte is the end of a prefix if it matches with the brace back.
//
// No atomic for the numbering: written reads seq.next on the drainer
// goroutine, which owns it with a ring file (there is no write-through
// then); recovery runs in New, before the drainer starts.
//
// Sequence slot (64 bytes, little-endian): next, mark, format, the run
// identity's 16 bytes (two words), then CRC-32C of those five words.

import (
	"encoding/binary"
	"hash/crc32"
	"sync/atomic"
)

const seqSlotWords = 5

// openBrace is the byte a JSON prefix replaces (see ringImage.sumMatches).
var openBrace = []byte{'{'}

// seqRecordSum is the checksum of a record enqueued with SeqRoom bytes of
// headroom: like recordSum (seeded with the whole length), over the bytes
// after the headroom, which the drainer may overwrite with a number after the
// commit. A record without the room (cannot happen) is summed whole.
func seqRecordSum(p []byte) uint64 {
	if len(p) < SeqRoom {
		return recordSum(p)
	}
	return uint64(crc32.Update(uint32(len(p)), castagnoli, p[SeqRoom:])) & sumMask
}

// durableSum is the checksum a producer commits in a file-backed ring: of the
// line after the headroom when records carry numbers (seq), else of it all.
func durableSum(p []byte, seq bool) uint64 {
	if seq {
		return seqRecordSum(p)
	}
	return recordSum(p)
}

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
func (r *ringFile) storeSeqSlot(off int, s ringState) {
	i := (off - ringSeqSlot0) / ringSlotSize
	blank := s.seqNext|s.seqMark == 0 && s.seqFmt == SeqOff && s.seqRun == [RunIDLen]byte{}
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
func (r *ringFile) emptyState() ringState {
	var s ringState
	if r.seq != nil && r.seq.on() {
		s.seqNext, s.seqFmt = 1, r.seq.format
		copy(s.seqRun[:], r.seq.run)
	}
	return s
}

// parseSeqSlot reads the sequence slot that goes with generation gen into st.
func parseSeqSlot(hdr []byte, gen uint64, st *ringState) bool {
	slot := hdr[ringSeqSlot0+ringSlotSize*int(gen&1):][:ringSlotSize]
	var w [seqSlotWords]uint64
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(slot[8*i:])
	}
	if binary.LittleEndian.Uint64(slot[8*seqSlotWords:]) != seqCRC(w) || w[2] > uint64(SeqKV) {
		return false
	}
	st.seqNext, st.seqMark, st.seqFmt = w[0], w[1], SeqFormat(w[2])
	binary.LittleEndian.PutUint64(st.seqRun[:8], w[3])
	binary.LittleEndian.PutUint64(st.seqRun[8:], w[4])
	return true
}

// deadRun returns the numbering of the run that accepted the records the
// state's file holds, as it stands at head (the first record's number).
func (s *ringState) deadRun() seqState {
	return seqState{format: s.seqFmt, run: string(s.seqRun[:]), next: s.seqNext + s.seqMark}
}

// sumMatches reports whether the payload p of a committed record carries the
// checksum sum, and whether it does only with its line's first byte back to
// the opening brace a JSON number's prefix replaced (brace).
func (im *ringImage) sumMatches(p []byte, sum uint64) (ok, brace bool) {
	if im.seq == SeqOff {
		return recordSum(p) == sum, false
	}
	if seqRecordSum(p) == sum {
		return true, false
	}
	if im.seq != SeqJSON || len(p) <= SeqRoom || (p[SeqRoom] != ',' && p[SeqRoom] != '"') {
		return false, false
	}
	c := crc32.Update(uint32(len(p)), castagnoli, openBrace)
	c = crc32.Update(c, castagnoli, p[SeqRoom+1:])
	return uint64(c)&sumMask == sum, true
}

// numberEntry gives the replayed entry e the number s has next, in place in
// the ring, exactly as the drainer's collect did: a record gets the prefix
// and its data becomes the line written; an oversize reference takes its
// number (its length written is then unknown: the prefix's is not known).
// It reports whether e took a number.
func numberEntry(e *ringEntry, s *seqState) bool {
	if !s.on() {
		return false
	}
	switch e.kind {
	case entRecord:
		if len(e.data) < SeqRoom {
			return false // s.number does not number it either
		}
		if e.brace {
			e.data[SeqRoom] = '{' // the line as the producer committed it
			e.brace = false
		}
		e.data = s.number(e.data)
		e.size = uint64(len(e.data))
		return true
	case entOversize:
		s.next++
		e.size = lenMask
		return true
	}
	return false
}

// owedMarker returns the drop marker line for the n numbers from first,
// which the output lacks (nil if the marker hook gives no line or panics):
// recovery writes it in front of the next record.
func (r *ringFile) owedMarker(s *seqState, first, n uint64) (line []byte) {
	if n == 0 || r.mark == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			line = nil // as the drainer: a marker that panics writes nothing
		}
	}()
	m := r.mark(nil, n)
	if len(m) == 0 {
		return nil
	}
	at := seqState{format: s.format, run: s.run, next: first}
	return at.marker(nil, m, n)
}

// flightNumbers returns the sequence slot after the first j entries of the
// interrupted batch ents reached the output: the number the next record
// gets, or, if the output lacks the drop marker that opened the batch (never
// written, torn, or cut), the marker's first number and count, so replay
// writes it again (then j == 0: no record follows a marker not written).
func flightNumbers(ents []ringEntry, j int, end flightEnd, st ringState, now OutputPosition, cutMarker bool) (next, mark uint64) {
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
func (r *ringFile) settle(pos, next, mark uint64) {
	s := r.st
	s.head, s.end, s.pre = pos, pos, 0
	s.seqNext, s.seqMark = next, mark
	r.publish(s)
}
