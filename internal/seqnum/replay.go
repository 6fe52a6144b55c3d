package seqnum

// Replay numbers the records a durable ring file replays as the drainer
// numbered them live (the ring file's Numbering), with Mark, the drop
// marker of the bus that replays them (nil: none).
type Replay struct {
	Mark func(dst []byte, n uint64) []byte
}

// Replayable: the JSON and key=value formats (not Encoded, which the bus
// refuses with a ring file).
func (Replay) Replayable(f uint8) bool { return Format(f) == JSON || Format(f) == KV }

// Number numbers rec as the drainer does.
func (Replay) Number(f uint8, id string, n uint64, rec []byte) []byte {
	s := State{Format: Format(f), Run: id, Next: n}
	return s.Number(rec)
}

// Replaced: a JSON prefix replaces the line's opening brace, leaving the
// line to go on with the object's next byte (a key's quote, or the comma).
func (Replay) Replaced(f uint8, line []byte) (byte, bool) {
	if Format(f) != JSON || len(line) == 0 || (line[0] != ',' && line[0] != '"') {
		return 0, false
	}
	return '{', true
}

// Marker is the numbered drop marker for the n numbers from first.
func (r Replay) Marker(f uint8, id string, first, n uint64) []byte {
	if r.Mark == nil {
		return nil
	}
	line := r.Mark(nil, n)
	if len(line) == 0 {
		return nil
	}
	s := State{Format: Format(f), Run: id, Next: first}
	return s.Marker(nil, line, n)
}
