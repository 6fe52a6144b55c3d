// Package seqnum numbers records in the order they reach the output, with
// a run identity: an optional stage of the bus's drainer, which numbers
// each record as it collects it (Number) and each drop marker (Marker).
package seqnum

import (
	"math/rand/v2"
	"strconv"
)

// Format is how records carry their sequence number and run identity:
// the drainer writes a prefix into the Room bytes of headroom every record then begins with.
type Format uint8

const (
	// Off: no numbers, no headroom (the default).
	Off Format = iota
	// JSON: `{"seq":N,"run":"R",` takes the place of the record's
	// opening brace, so both keys are the object's first.
	JSON
	// KV: `seq=N run=R ` goes in front of the record.
	KV
	// Encoded: the output's own encoder writes the numbers in its
	// encoding (Encode, encoded.go).
	Encoded
)

// Room is the headroom, in bytes, in front of every record numbered: the longest prefix (a JSON one with a
// 20-digit number and a 16-digit run identity is 53 bytes) fits in it.
const Room = 64

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

// State numbers records in the order they reach the output.
//
// Why no atomic: only the drainer uses it, numbering entries as it
// collects them (in ring order, before their write) and markers as it
// adds them.
type State struct {
	Format Format
	Run    string  // the run identity, RunIDLen hex digits
	Next   uint64  // the number the next record gets (the first is 1)
	Enc    Encoder // Encoded's encoder (encoded.go)
}

// On reports whether records carry numbers.
func (s *State) On() bool { return s.Format != Off }

// Number gives the record rec (Room bytes of headroom, then the
// encoded line) the next number: it writes the prefix at the end of the
// headroom and returns the line to write, which starts at the prefix.
func (s *State) Number(rec []byte) []byte {
	if len(rec) < Room {
		return rec // not ours (cannot happen: the handler adds the room)
	}
	if s.Format == Encoded {
		return s.Enc.number(s, rec)
	}
	if isRunEnd(rec[Room:]) {
		return s.runEnd(rec)
	}
	var buf [Room]byte
	line := rec[Room:]
	p := s.appendPrefix(buf[:0], s.Next, len(line) > 0 && line[0] == '{', len(line) > 1 && line[1] == '}')
	s.Next++
	start := Room - len(p)
	if s.Format == JSON && len(line) > 0 && line[0] == '{' {
		start++ // the prefix's own brace replaces the line's
	}
	copy(rec[start:], p)
	return rec[start:]
}

// Marker returns the drop marker line m with the number of the first of
// the n records lost at its gap, appended to dst[:0]: the numbers of the
// lost records are the marker's and the n-1 after it, so the next record
// has the marker's number plus n. The marker opens with its own key, in a
// form no record takes (every record starts with its number, `{"seq":` or
// `seq=`), so no record's content can pass for one; then the run identity
// and the count, then m (in the JSON form, m's object goes on after them):
//
//	{"drop_seq":N,"run":"R","drop_count":n,"time":…,"msg":"asyncbus: records dropped","dropped":n}
//	drop_seq=N run=R drop_count=n time=… msg="asyncbus: records dropped" dropped=n
func (s *State) Marker(dst, m []byte, n uint64) []byte {
	if s.Format == Encoded {
		return s.Enc.marker(s, dst, m, n)
	}
	obj := s.Format == JSON && len(m) > 0 && m[0] == '{'
	dst = dst[:0]
	if obj {
		dst = append(dst, `{"drop_seq":`...)
		dst = strconv.AppendUint(dst, s.Next, 10)
		dst = append(append(append(dst, `,"run":"`...), s.Run...), `","drop_count":`...)
		dst = strconv.AppendUint(dst, n, 10)
		if len(m) > 1 && m[1] != '}' {
			dst = append(dst, ',')
		}
		m = m[1:]
	} else {
		dst = append(dst, "drop_seq="...)
		dst = strconv.AppendUint(dst, s.Next, 10)
		dst = append(append(append(dst, " run="...), s.Run...), " drop_count="...)
		dst = strconv.AppendUint(dst, n, 10)
		dst = append(dst, ' ')
	}
	s.Next += n
	return append(dst, m...)
}

// appendPrefix appends the prefix for number n: the JSON object's opening
// (obj; without the trailing comma for an empty object) or key=value pairs.
func (s *State) appendPrefix(dst []byte, n uint64, obj, empty bool) []byte {
	if s.Format == JSON && obj {
		dst = append(dst, `{"seq":`...)
		dst = strconv.AppendUint(dst, n, 10)
		dst = append(dst, `,"run":"`...)
		dst = append(dst, s.Run...)
		if empty {
			return append(dst, '"')
		}
		return append(dst, `",`...)
	}
	dst = append(dst, "seq="...)
	dst = strconv.AppendUint(dst, n, 10)
	dst = append(dst, " run="...)
	dst = append(dst, s.Run...)
	return append(dst, ' ')
}

// RunEndSentinel opens the record a handler enqueues at Close to have the
// run-end line written in its place, RunEndRoom bytes of anything after
// it: no encoder writes a line that starts with NUL.
const RunEndSentinel = "\x00asyncbus:runend"

// RunEndRoom is the room after RunEndSentinel for the run-end line: the
// longest (JSON, 16-digit run, 20-digit count) is 90 bytes.
const RunEndRoom = 128

// isRunEnd reports whether line is a run-end request (RunEndSentinel).
func isRunEnd(line []byte) bool {
	return len(line) >= len(RunEndSentinel)+RunEndRoom && string(line[:len(RunEndSentinel)]) == RunEndSentinel
}

// runEnd writes, at the end of the run-end request rec, the line that
// closes the run: its identity first, in a form no record takes (every
// record starts with its number), and the count of the numbers it gave
// out, records and lost records alike; it takes no number. The sentinel
// stays as it is, so that a ring file's replay writes the line again.
//
//	{"run_end":"R","count":C,"msg":"asyncbus: run ended"}
//	run_end=R count=C msg="asyncbus: run ended"
func (s *State) runEnd(rec []byte) []byte {
	var buf [RunEndRoom]byte
	e := buf[:0]
	if s.Format == JSON {
		e = append(append(append(e, `{"run_end":"`...), s.Run...), `","count":`...)
		e = strconv.AppendUint(e, s.Next-1, 10)
		e = append(e, `,"msg":"asyncbus: run ended"}`+"\n"...)
	} else {
		e = append(append(append(e, "run_end="...), s.Run...), " count="...)
		e = strconv.AppendUint(e, s.Next-1, 10)
		e = append(e, ` msg="asyncbus: run ended"`+"\n"...)
	}
	return rec[len(rec)-copy(rec[len(rec)-len(e):], e):]
}
