package seqnum

import (
	"fmt"
)

// Encode writes a record's number in an output's own encoding (Encoded): it appends to dst the head that takes the place of the
// first skip bytes of rec, so that the record carries number seq and run
// identity run, and returns it with skip; a nil head for a record it does
// not recognise (written as it is, taking no number).
type Encode func(dst, rec []byte, seq uint64, run string) (head []byte, skip int)

// Encoder numbers records with an output's Encode, in place: the
// head replaces the line's first skip bytes and as much of the record's
// Room bytes of headroom as it needs. A head that does not fit (more
// than Room bytes longer than skip, or a skip past the line's end), or
// a SeqEncode that panics, leaves the record without a number (taking
// none) and is reported once.
type Encoder struct {
	Fn      Encode
	Report  func(error) bool // the bus's Report: off the drainer's goroutine
	scratch []byte           // the head, reused: only the drainer calls in
	faulted bool             // a fault was reported (at most one report per bus)
}

// number gives rec (Room bytes of headroom, then the line) the next
// number of s, as State.Number.
func (e *Encoder) number(s *State, rec []byte) []byte {
	line := rec[Room:]
	head, skip, ok := e.head(line, s.Next, s.Run)
	if !ok {
		return line
	}
	s.Next++
	start := Room + skip - len(head)
	copy(rec[start:], head)
	return rec[start:]
}

// marker appends the drop marker m, numbered with the first of the n
// numbers lost at its gap, to dst[:0]: the output's own marker (the
// handler supplies one in its encoding), or, for one the encoder does not
// recognise, m as it is. Either way the n numbers are taken.
func (e *Encoder) marker(s *State, dst, m []byte, n uint64) []byte {
	head, skip, ok := e.head(m, s.Next, s.Run)
	s.Next += n
	if !ok {
		return append(dst[:0], m...)
	}
	return append(append(dst[:0], head...), m[skip:]...)
}

// head runs fn for line with number seq and reports whether its head can
// replace the line's start in place (see seqEncoder).
func (e *Encoder) head(line []byte, seq uint64, run string) (head []byte, skip int, ok bool) {
	head, skip, err := e.call(line, seq, run)
	switch {
	case err != nil:
	case head == nil:
		return nil, 0, false // not the encoder's record: no number, no fault
	case skip < 0 || skip > len(line):
		err = fmt.Errorf("it replaced %d bytes of a %d-byte record", skip, len(line))
	case len(head)-skip > Room:
		err = fmt.Errorf("its head of %d bytes replaced %d bytes of the record: %d more than the %d bytes of room", len(head), skip, len(head)-skip-Room, Room)
	default:
		e.scratch = head[:0]
		return head, skip, true
	}
	if !e.faulted {
		e.faulted = true
		e.Report(fmt.Errorf("asyncbus: the output's sequence numbering failed: %w; such records are written without a number (reported once)", err))
	}
	return nil, 0, false
}

// call runs fn into the scratch buffer, turning a panic into an error.
func (e *Encoder) call(line []byte, seq uint64, run string) (head []byte, skip int, err error) {
	defer func() {
		if r := recover(); r != nil {
			head, skip, err = nil, 0, fmt.Errorf("AppendSequence panicked: %v", r)
		}
	}()
	head, skip = e.Fn(e.scratch[:0], line, seq, run)
	return head, skip, nil
}
