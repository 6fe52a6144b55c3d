package main

import (
	"bytes"
	"strconv"
)

// seqPrefix is the sequence number and run identity asyncbus writes first
// on every line with Options.Features.Sequence: `{"seq":N,"run":"R"` opening a JSON
// object, or `seq=N run=R ` in front of any other format's line.
type seqPrefix struct {
	seq uint64
	run string
	// rest is the line without the prefix: for JSON the object with the
	// two keys taken out, otherwise what follows them.
	rest []byte
}

// parseSeqPrefix reads the prefix of line, if it has one exactly as
// asyncbus writes it.
func parseSeqPrefix(line []byte) (seqPrefix, bool) {
	if s, ok := bytes.CutPrefix(line, []byte(`{"seq":`)); ok {
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
		run, s := string(s[:i]), s[i+1:]
		rest := []byte{'{'}
		if t, ok := bytes.CutPrefix(s, []byte(",")); ok {
			rest = append(rest, t...)
		} else {
			rest = append(rest, s...)
		}
		return seqPrefix{seq: n, run: run, rest: rest}, true
	}
	if s, ok := bytes.CutPrefix(line, []byte("seq=")); ok {
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
		return seqPrefix{seq: n, run: string(s[:i]), rest: s[i+1:]}, true
	}
	return seqPrefix{}, false
}

// gluedRecord returns where, after the line's start, a numbered record
// begins (a prefix that parses), or 0. In JSON the prefix's opening
// cannot occur inside a record (a string escapes its quotes); a
// key=value line could hold it only in a quoted value that spells out a
// whole prefix.
func gluedRecord(line []byte) int {
	for _, open := range [][]byte{[]byte(`{"seq":`), []byte("seq=")} {
		for i := 1; i < len(line); {
			j := bytes.Index(line[i:], open)
			if j < 0 {
				break
			}
			if _, ok := parseSeqPrefix(line[i+j:]); ok {
				return i + j
			}
			i += j + 1
		}
	}
	return 0
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
