package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// DropMarkerMsg is the message of the line asyncbus writes in place of
// records it dropped; the line carries an integer "dropped" attribute.
const DropMarkerMsg = "asyncbus: records dropped"

// maxLine bounds one line of the file read back; a longer line is an error.
const maxLine = 16 << 20

// LineCount is what reading a log file back found.
type LineCount struct {
	// Bytes is the size of the file.
	Bytes int64 `json:"bytes"`
	// Lines counts the non-empty lines that are not drop markers.
	Lines int64 `json:"lines"`
	// Unique counts the lines whose seq is valid and seen for the first
	// time; Lines == Unique when the file verifies.
	Unique int64 `json:"unique"`
	// Duplicates counts lines whose seq was already seen.
	Duplicates int64 `json:"duplicates"`
	// Unparsed counts non-marker lines without a valid seq (torn,
	// foreign or out-of-range lines).
	Unparsed int64 `json:"unparsed"`
	// Markers counts drop-marker lines.
	Markers int64 `json:"markers"`
	// MarkerDropped sums the "dropped" counts the markers report.
	MarkerDropped uint64 `json:"marker_dropped"`
	// BadMarkers counts marker lines whose count could not be read.
	BadMarkers int64 `json:"bad_markers"`
}

// Verified reports whether every non-marker line is a distinct record of
// the run and every marker could be read.
func (c LineCount) Verified() bool {
	return c.Lines == c.Unique && c.Duplicates == 0 && c.Unparsed == 0 && c.BadMarkers == 0
}

// seqIndex maps a seq of a run of n records over G goroutines to a dense
// index in [0, n), or -1 if the seq cannot belong to the run.
type seqIndex struct {
	offsets []int // offsets[g] = first index of goroutine g; offsets[G] = n
}

func newSeqIndex(n, goroutines int) seqIndex {
	off := make([]int, goroutines+1)
	for g := 0; g < goroutines; g++ {
		off[g+1] = off[g] + perGoroutine(n, goroutines, g)
	}
	return seqIndex{offsets: off}
}

func (x seqIndex) index(seq uint64) int {
	g, i := seq/SeqStride, seq%SeqStride
	if g >= uint64(len(x.offsets)-1) {
		return -1
	}
	lo, hi := x.offsets[g], x.offsets[g+1]
	if i >= uint64(hi-lo) {
		return -1
	}
	return lo + int(i)
}

// CountLines reads a log file written by a run of n records over the given
// number of goroutines and counts its lines, verifying every record's seq
// and summing the drop markers. It understands the JSON form ("seq":123,
// "dropped":4) and the key=value forms of text, logfmt and console
// (seq=123, dropped=4).
func CountLines(r io.Reader, n, goroutines int) (LineCount, error) {
	var c LineCount
	if n < 0 || goroutines < 1 {
		return c, fmt.Errorf("harness: CountLines: bad n=%d goroutines=%d", n, goroutines)
	}
	idx := newSeqIndex(n, goroutines)
	seen := make([]uint64, (n+63)/64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(scanLinesCountingBytes(&c.Bytes))
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.Contains(line, []byte(DropMarkerMsg)) {
			c.Markers++
			if v, ok := intAttr(line, "dropped"); ok {
				c.MarkerDropped += v
			} else {
				c.BadMarkers++
			}
			continue
		}
		c.Lines++
		v, ok := intAttr(line, "seq")
		if !ok {
			c.Unparsed++
			continue
		}
		i := idx.index(v)
		if i < 0 {
			c.Unparsed++
			continue
		}
		if seen[i/64]&(1<<(i%64)) != 0 {
			c.Duplicates++
			continue
		}
		seen[i/64] |= 1 << (i % 64)
		c.Unique++
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	return c, nil
}

// scanLinesCountingBytes is bufio.ScanLines that also adds every consumed
// byte to *total.
func scanLinesCountingBytes(total *int64) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		*total += int64(adv)
		return adv, tok, err
	}
}

// intAttr finds the last attribute named key in line, as "key":123 (JSON)
// or key=123 (text, logfmt, console; key at the line start or after a
// space), and parses its unsigned decimal value.
func intAttr(line []byte, key string) (uint64, bool) {
	j := []byte(`"` + key + `":`)
	if p := bytes.LastIndex(line, j); p >= 0 {
		return parseUint(line[p+len(j):])
	}
	kv := []byte(key + "=")
	for end := len(line); ; {
		p := bytes.LastIndex(line[:end], kv)
		if p < 0 {
			return 0, false
		}
		if p == 0 || line[p-1] == ' ' || line[p-1] == '\t' {
			return parseUint(line[p+len(kv):])
		}
		end = p
	}
}

// parseUint parses the leading decimal digits of b; at least one digit,
// followed by the end, a space, a comma, a closing brace or a quote-free
// separator, and no overflow.
func parseUint(b []byte) (uint64, bool) {
	var v uint64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		d := uint64(b[n] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
		n++
	}
	if n == 0 {
		return 0, false
	}
	if n < len(b) {
		switch b[n] {
		case ' ', '\t', ',', '}':
		default:
			return 0, false
		}
	}
	return v, true
}
