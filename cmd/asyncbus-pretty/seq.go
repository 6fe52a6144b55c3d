package main

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// seqPrefix is the sequence number and run identity asyncbus writes first
// on every line with Options.Features.Sequence: `{"seq":N,"run":"R"` opening a JSON
// object, or `seq=N run=R ` in front of any other format's line. A drop
// marker opens instead with its own key, which no record's line opens
// with, and the count of records lost: `{"drop_seq":N,"run":"R","drop_count":C`
// or `drop_seq=N run=R drop_count=C `, N being the first lost record's number.
type seqPrefix struct {
	seq uint64
	run string
	// drop is a drop marker's count of records lost; 0 for a record.
	drop uint64
	// rest is the line without the prefix: for JSON the object with the
	// prefix's keys taken out, otherwise what follows them.
	rest []byte
}

// parseSeqPrefix reads the prefix of line, a record's or a drop marker's,
// if it has one exactly as asyncbus writes it.
func parseSeqPrefix(line []byte) (seqPrefix, bool) {
	if s, ok := bytes.CutPrefix(line, []byte(`{"seq":`)); ok {
		return parseJSONPrefix(s, false)
	}
	if s, ok := bytes.CutPrefix(line, []byte(`{"drop_seq":`)); ok {
		return parseJSONPrefix(s, true)
	}
	if s, ok := bytes.CutPrefix(line, []byte("seq=")); ok {
		return parseKVPrefix(s, false)
	}
	if s, ok := bytes.CutPrefix(line, []byte("drop_seq=")); ok {
		return parseKVPrefix(s, true)
	}
	return seqPrefix{}, false
}

// parseJSONPrefix is parseSeqPrefix for the JSON form, s the line after
// the first key; drop: a drop marker's.
func parseJSONPrefix(s []byte, drop bool) (seqPrefix, bool) {
	n, s, ok := cutUint(s)
	if !ok {
		return seqPrefix{}, false
	}
	s, ok = bytes.CutPrefix(s, []byte(`,"run":"`))
	if !ok || len(s) < 1 {
		return seqPrefix{}, false
	}
	i := bytes.IndexByte(s, '"')
	if i <= 0 || !isHex(s[:i]) {
		return seqPrefix{}, false
	}
	p := seqPrefix{seq: n, run: string(s[:i])}
	s = s[i+1:]
	if drop {
		if s, ok = bytes.CutPrefix(s, []byte(`,"drop_count":`)); !ok {
			return seqPrefix{}, false
		}
		if p.drop, s, ok = cutUint(s); !ok || p.drop == 0 {
			return seqPrefix{}, false
		}
	}
	p.rest = []byte{'{'}
	if t, ok := bytes.CutPrefix(s, []byte(",")); ok {
		p.rest = append(p.rest, t...)
	} else {
		p.rest = append(p.rest, s...)
	}
	return p, true
}

// parseKVPrefix is parseSeqPrefix for the key=value form, s the line
// after the first key; drop: a drop marker's.
func parseKVPrefix(s []byte, drop bool) (seqPrefix, bool) {
	n, s, ok := cutUint(s)
	if !ok {
		return seqPrefix{}, false
	}
	s, ok = bytes.CutPrefix(s, []byte(" run="))
	if !ok {
		return seqPrefix{}, false
	}
	i := bytes.IndexByte(s, ' ')
	if i <= 0 || !isHex(s[:i]) {
		return seqPrefix{}, false
	}
	p := seqPrefix{seq: n, run: string(s[:i])}
	s = s[i+1:]
	if drop {
		if s, ok = bytes.CutPrefix(s, []byte("drop_count=")); !ok {
			return seqPrefix{}, false
		}
		if p.drop, s, ok = cutUint(s); !ok || p.drop == 0 {
			return seqPrefix{}, false
		}
		if s, ok = bytes.CutPrefix(s, []byte(" ")); !ok {
			return seqPrefix{}, false
		}
	}
	p.rest = s
	return p, true
}

// runEnd is the line Close writes after a run's last record: the run
// identity first, in a form no record takes (every numbered record starts
// with its number, `{"seq":` or `seq=`), and the count of the numbers the
// run gave out.
type runEnd struct {
	run   string
	count uint64
}

// parseRunEnd reads a run-end line exactly as asyncbus writes it:
// `{"run_end":"R","count":C,…}` or `run_end=R count=C …`.
func parseRunEnd(line []byte) (runEnd, bool) {
	var s []byte
	var sep []byte
	if t, ok := bytes.CutPrefix(line, []byte(`{"run_end":"`)); ok {
		s, sep = t, []byte(`","count":`)
	} else if t, ok := bytes.CutPrefix(line, []byte("run_end=")); ok {
		s, sep = t, []byte(" count=")
	} else {
		return runEnd{}, false
	}
	i := bytes.Index(s, sep)
	if i <= 0 || !isHex(s[:i]) {
		return runEnd{}, false
	}
	n, _, ok := cutUint(s[i+len(sep):])
	if !ok {
		return runEnd{}, false
	}
	return runEnd{run: string(s[:i]), count: n}, true
}

// gluedRecord returns where, after the line's start, a record glued to a
// torn one begins, or 0. The numbers are first on a line by construction,
// so a prefix further on is a user's attribute or text unless the line
// itself shows the tear, and the rest from the candidate is a whole record:
//   - JSON (a line opening an object): the line is not valid JSON (asyncbus writes only valid objects;
//     a group or a string holding `{"seq":…` leaves it valid), and the
//     line from the candidate on is;
//   - key=value (a line not opening a JSON object): the candidate is not at
//     a token's start outside quotes (an attribute's place), not inside a
//     quoted value the line closes, and what follows it parses as a record.
//
// A tear that falls exactly after a space of a key=value line glues the
// next record at a token's start, where it cannot be told from an
// attribute: the next run then reports its first number missing (a false
// alarm, never a loss hidden).
func (k *checker) gluedRecord(line []byte) int {
	if len(line) > 0 && line[0] == '{' {
		return gluedJSON(line)
	}
	open := []byte("seq=")
	for i := 1; i < len(line); {
		j := bytes.Index(line[i:], open)
		if j < 0 {
			return 0
		}
		i += j
		at := i
		if at >= len("drop_") && string(line[at-len("drop_"):at]) == "drop_" {
			at -= len("drop_") // a drop marker's start
		}
		if at > 0 {
			if pre, ok := parseSeqPrefix(line[at:]); ok && tornAt(line, at) && k.p.parse(&k.r, string(pre.rest)) {
				return at
			}
		}
		i++
	}
	return 0
}

// gluedJSON is gluedRecord's JSON case.
func gluedJSON(line []byte) int {
	valid := -1 // unknown until a candidate needs it
	for i := 1; i < len(line); {
		j := bytes.Index(line[i:], []byte(`{"`))
		if j < 0 {
			return 0
		}
		i += j
		if _, ok := parseSeqPrefix(line[i:]); ok {
			if valid < 0 {
				valid = 0
				if json.Valid(line) {
					valid = 1
				}
			}
			if valid == 1 {
				return 0
			}
			if json.Valid(line[i:]) {
				return i
			}
		}
		i++
	}
	return 0
}

// tornAt reports whether a key=value line's own record cannot have put
// byte i where it is: in the middle of a token outside quotes, or inside
// a quoted value that the line leaves open (the rest from i, a record of
// its own, balances its quotes).
func tornAt(line []byte, i int) bool {
	if quotes(line[:i])%2 == 0 {
		return line[i-1] != ' ' && line[i-1] != '\t'
	}
	return quotes(line[i:])%2 == 0
}

// quotes counts the double quotes of s not escaped by a backslash.
func quotes(s []byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			n++
		}
	}
	return n
}

// cutUint reads a decimal number at the start of s.
func cutUint(s []byte) (uint64, []byte, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	n, err := strconv.ParseUint(string(s[:i]), 10, 64)
	return n, s[i:], err == nil
}

func isHex(s []byte) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return len(s) > 0
}
