//go:build unix

package ringfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// The tests' ring layout: the bus's header word (commit, padding and
// oversize flags in bits 63..61, the checksum in bits 32..60, the length
// below), written out here so that this package's tests stand alone.
const (
	tCommit   = uint64(1) << 63
	tPadding  = uint64(1) << 62
	tOversize = uint64(1) << 61
	tLenMask  = uint64(1)<<32 - 1
	tSumShift = 32
)

var testLayout = Layout{
	Decode: func(w uint64) (Kind, uint64, uint64) {
		n, sum := w&tLenMask, (w>>tSumShift)&sumMask
		if w&tCommit == 0 {
			return Free, n, sum
		}
		switch w & (tPadding | tOversize) {
		case 0:
			return Record, n, sum
		case tPadding:
			return Padding, n, sum
		case tOversize:
			return Oversize, n, sum
		}
		return Malformed, n, sum
	},
	MaxInline: 1 << 30,
}

// testRoom is the headroom of numbered records in these tests.
const testRoom = 64

// testNumbering is a JSON-only numbering: `{"seq":N,"run":"R",` takes the
// place of the line's opening brace (format 1).
type testNumbering struct{}

func (testNumbering) Replayable(f uint8) bool { return f == 1 }

func (testNumbering) Number(_ uint8, id string, n uint64, rec []byte) []byte {
	p := fmt.Sprintf(`{"seq":%d,"run":"%s",`, n, id)
	start := testRoom - len(p) + 1 // the prefix's brace replaces the line's
	copy(rec[start:], p)
	return rec[start:]
}

func (testNumbering) Replaced(_ uint8, line []byte) (byte, bool) {
	if len(line) == 0 || (line[0] != ',' && line[0] != '"') {
		return 0, false
	}
	return '{', true
}

func (testNumbering) Marker(_ uint8, id string, first, n uint64) []byte {
	return fmt.Appendf(nil, `{"seq":%d,"run":"%s","dropped":%d}`+"\n", first, id, n)
}

// image builds ring file images by hand (for gaps, junk and corruption).
type image struct {
	capacity uint64
	data     []byte // header page, then the ring
	st       State
}

func newImage(capacity uint64) *image {
	return &image{capacity: capacity, data: make([]byte, HeaderSize+capacity)}
}

func (im *image) word(pos, w uint64) {
	binary.LittleEndian.PutUint64(im.data[HeaderSize+pos&(im.capacity-1):], w)
}

// record writes a committed record at pos and returns the next position.
func (im *image) record(pos uint64, p []byte) uint64 {
	off := HeaderSize + pos&(im.capacity-1)
	copy(im.data[off+hdrSize:], p)
	im.word(pos, tCommit|Sum(p, 0)<<tSumShift|uint64(len(p)))
	return pos + align8(hdrSize+uint64(len(p)))
}

// bytes returns the image with im.st as its current state.
func (im *image) bytes() []byte {
	out := append([]byte(nil), im.data...)
	copy(out, Header(im.capacity, Version, im.st))
	return out
}

// sink is an output that keeps each record written, in order.
type sink struct {
	mu   sync.Mutex
	recs []string
	fail error
}

func (s *sink) write(recs [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, r := range recs {
		s.recs = append(s.recs, string(r))
	}
	return nil
}

// warnings keeps the *Error warnings Open reports.
type warnings struct{ errs []*Error }

func (w *warnings) on(err error) {
	var e *Error
	if errors.As(err, &e) {
		w.errs = append(w.errs, e)
	}
}

// testOptions are Open's options for a ring file at path replaying to s.
func testOptions(path string, capacity uint64, s *sink, w *warnings) Options {
	return Options{
		Path: path, Capacity: capacity, MaxBatch: 16,
		Layout: testLayout, Numbering: testNumbering{}, Room: testRoom,
		Write: s.write, Warn: w.on,
	}
}

// line is record i: a line of its own length.
func line(i int) []byte { return fmt.Appendf(nil, "record %06d %s\n", i, strings.Repeat("x", i%37)) }
