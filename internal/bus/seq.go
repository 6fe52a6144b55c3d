package bus

import (
	"errors"
	"math/rand/v2"
	"strconv"
)

// SeqFormat is how records carry their sequence number and run identity
// (Config.Sequence): the drainer writes a prefix into the SeqRoom bytes of headroom every record then begins with.
type SeqFormat uint8

const (
	// SeqOff: no numbers, no headroom (the default).
	SeqOff SeqFormat = iota
	// SeqJSON: `{"seq":N,"run":"R",` takes the place of the record's
	// opening brace, so both keys are the object's first.
	SeqJSON
	// SeqKV: `seq=N run=R ` goes in front of the record.
	SeqKV
	// SeqEncoded: the output's own encoder writes the numbers in its
	// encoding (Config.SeqEncode, seqencoded.go).
	SeqEncoded
)

// SeqRoom is the headroom, in bytes, in front of every record enqueued on
// a bus with Config.Sequence set: the longest prefix (a JSON one with a
// 20-digit number and a 16-digit run identity is 53 bytes) fits in it.
const SeqRoom = 64

// RunIDLen is the length of a run identity: 16 hex digits, 64 random bits.
const RunIDLen = 16

// NewRunID returns a random run identity.
// It draws from math/rand/v2's global generator, which the runtime seeds
// from the operating system at start: unpredictable enough to tell runs
// apart, without crypto/rand's weight in every binary (a hello world on the
// handler is kept within 1.6 times slog's size).
func NewRunID() string {
	const digits = "0123456789abcdef"
	var b [RunIDLen]byte
	v := rand.Uint64()
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// seqState numbers records in the order they reach the output.
//
// Why no atomic: only the drainer uses it, numbering entries as it
// collects them (in ring order, before their write) and markers as it
// adds them.
type seqState struct {
	format SeqFormat
	run    string     // the run identity, RunIDLen hex digits
	next   uint64     // the number the next record gets (the first is 1)
	enc    seqEncoder // SeqEncoded's encoder (seqencoded.go)
}

// on reports whether records carry numbers.
func (s *seqState) on() bool { return s.format != SeqOff }

// number gives the record rec (SeqRoom bytes of headroom, then the
// encoded line) the next number: it writes the prefix at the end of the
// headroom and returns the line to write, which starts at the prefix.
func (s *seqState) number(rec []byte) []byte {
	if len(rec) < SeqRoom {
		return rec // not ours (cannot happen: the handler adds the room)
	}
	if s.format == SeqEncoded {
		return s.enc.number(s, rec)
	}
	var buf [SeqRoom]byte
	line := rec[SeqRoom:]
	p := s.appendPrefix(buf[:0], s.next, len(line) > 0 && line[0] == '{', len(line) > 1 && line[1] == '}')
	s.next++
	start := SeqRoom - len(p)
	if s.format == SeqJSON && len(line) > 0 && line[0] == '{' {
		start++ // the prefix's own brace replaces the line's
	}
	copy(rec[start:], p)
	return rec[start:]
}

// marker returns the drop marker line m with the number of the first of
// the n records lost at its gap, appended to dst[:0]: the numbers of the
// lost records are the marker's and the n-1 after it, so the next record
// has the marker's number plus n.
func (s *seqState) marker(dst, m []byte, n uint64) []byte {
	if s.format == SeqEncoded {
		return s.enc.marker(s, dst, m, n)
	}
	obj := s.format == SeqJSON && len(m) > 0 && m[0] == '{'
	dst = s.appendPrefix(dst[:0], s.next, obj, len(m) > 1 && m[1] == '}')
	s.next += n
	if obj {
		m = m[1:]
	}
	return append(dst, m...)
}

// appendPrefix appends the prefix for number n: the JSON object's opening
// (obj; without the trailing comma for an empty object) or key=value pairs.
func (s *seqState) appendPrefix(dst []byte, n uint64, obj, empty bool) []byte {
	if s.format == SeqJSON && obj {
		dst = append(dst, `{"seq":`...)
		dst = strconv.AppendUint(dst, n, 10)
		dst = append(dst, `,"run":"`...)
		dst = append(dst, s.run...)
		if empty {
			return append(dst, '"')
		}
		return append(dst, `",`...)
	}
	dst = append(dst, "seq="...)
	dst = strconv.AppendUint(dst, n, 10)
	dst = append(dst, " run="...)
	dst = append(dst, s.run...)
	return append(dst, ' ')
}

// errSeqEncodedRingFile is New's answer to SeqEncoded with RingFile.
var errSeqEncodedRingFile = errors.New("sequence numbers in an output's own encoding are not supported with a ring file yet")

// RunID is the run identity written with the numbers (Config.Sequence).
func (b *Bus) RunID() string { return b.seq.run }

// initSeq sets up Config.Sequence's numbering. With a ring file, records
// the file holds are replayed first with the numbers of the run that
// accepted them (ringseq.go); this run starts at 1 either way.
func (b *Bus) initSeq(cfg Config) error {
	if cfg.Sequence == SeqOff {
		return nil
	}
	if cfg.Sequence == SeqEncoded && cfg.RingFile != "" {
		return errSeqEncodedRingFile // the replay writes prefixes in the JSON and key=value formats only
	}
	b.seq = seqState{format: cfg.Sequence, run: cfg.RunID, next: 1, enc: seqEncoder{fn: cfg.SeqEncode, report: b.Report}}
	if len(b.seq.run) != RunIDLen {
		b.seq.run = NewRunID()
	}
	return nil
}
