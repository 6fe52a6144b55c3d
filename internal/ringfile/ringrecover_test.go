//go:build unix

package ringfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlightDone: how much of an interrupted batch the output holds is
// decided by its bytes, not by its size alone.
func TestFlightDone(t *testing.T) {
	recA, recB, recC := []byte("aaaaaaaaa\n"), []byte("bbbbbbbbbbbbbbbbbbb\n"), []byte("cccc\n")
	ents := []ringEntry{
		{kind: entRecord, data: recA, size: 10}, {kind: entRecord, data: []byte{}, size: 0}, {kind: entPadding},
		{kind: entRecord, data: recB, size: 20}, {kind: entOversize, size: 100}, {kind: entRecord, data: recC, size: 5},
	}
	oversize := bytes.Repeat([]byte("o"), 100) // its bytes were on the heap, not in the ring
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	st := ringState{size: 1000, dev: 1, ino: 2}
	earlier := bytes.Repeat([]byte("e"), 1000) // the output before the batch
	cases := []struct {
		name    string
		ents    []ringEntry // nil: ents
		st      ringState
		rotated bool   // the output is another file (ino 3), starting at 0
		after   []byte // what the output holds after earlier
		noRead  bool   // the output cannot be read back
		err     error  // the output's position cannot be had
		j       int
		end     flightEnd
	}{
		{name: "nothing written", st: st, j: 0, end: flightExact},
		{name: "first record", st: st, after: recA, j: 3, end: flightExact}, // the empty record and padding go with it
		{name: "through the oversize", st: st, after: cat(recA, recB, oversize), j: 5, end: flightExact},
		{name: "all", st: st, after: cat(recA, recB, oversize, recC), j: 6, end: flightExact},
		{name: "all, then bytes appended later", st: st, after: cat(recA, recB, oversize, recC, []byte("later\n")), j: 6, end: flightExact},
		{name: "mid record", st: st, after: cat(recA, recB[:5]), j: 3, end: flightTorn},
		{name: "inside the first record", st: st, after: recA[:4], j: 0, end: flightTorn},
		{name: "inside the oversize bytes", st: st, after: cat(recA, recB, oversize[:50]), j: 4, end: flightTorn},
		{name: "foreign bytes as long as the first record", st: st, after: []byte("=========\n"), j: 0, end: flightForeign},
		{name: "foreign bytes shorter than the first record", st: st, after: []byte("go\n"), j: 0, end: flightForeign},
		{name: "foreign bytes as long as the first two records", st: st, after: bytes.Repeat([]byte("-"), 30), j: 0, end: flightForeign},
		{name: "foreign bytes after the first record", st: st, after: cat(recA, []byte("starting\n")), j: 3, end: flightForeign},
		{name: "a fragment, then foreign bytes", st: st, after: cat(recA, recB[:5], []byte("x\n")), j: 3, end: flightForeign},
		{name: "foreign bytes after an oversize: it is not counted", st: st, after: cat(recA, recB, oversize, []byte("ccc!\n")), j: 4, end: flightForeign},
		{name: "more bytes after an oversize that ends the batch", ents: ents[:5], st: st, after: cat(recA, recB, oversize, []byte("x\n")), j: 4, end: flightForeign},
		{name: "rotated, nothing written", st: st, rotated: true, j: 0, end: flightExact},
		{name: "shrunk", st: ringState{size: 2000, dev: 1, ino: 2}, after: recA, j: 0, end: flightUnknown},
		{name: "rotated at the batch", st: st, rotated: true, after: cat(recA, recB), j: 4, end: flightExact},
		{name: "rotated, another file's bytes", st: st, rotated: true, after: []byte("new file\n"), j: 0, end: flightForeign},
		{name: "marker in front", st: ringState{size: 1000, dev: 1, ino: 2, pre: 7}, after: cat([]byte("marker\n"), recA), j: 3, end: flightExact},
		{name: "inside the marker", st: ringState{size: 1000, dev: 1, ino: 2, pre: 7}, after: []byte("mar"), j: 0, end: flightTorn},
		{name: "marker, then foreign bytes", st: ringState{size: 1000, dev: 1, ino: 2, pre: 7}, after: []byte("marker\nstarting\n"), j: 0, end: flightForeign},
		{name: "oversize of unknown length", ents: []ringEntry{ents[0], {kind: entOversize, size: unknownSize}}, st: st, after: recA, j: 0, end: flightUnknown},
		{name: "unknown before", st: ringState{size: unknownOutputSize}, after: recA, j: 0, end: flightUnknown},
		{name: "unknown now", st: st, err: errors.New("gone"), j: 0, end: flightUnknown},
		{name: "cannot be read back", st: st, after: recA, noRead: true, j: 0, end: flightUnread},
		{name: "nothing written needs no reading", st: st, noRead: true, j: 0, end: flightExact},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file, now := cat(earlier, c.after), Position{Dev: 1, Ino: 2}
			if c.rotated {
				file, now.Ino = c.after, 3
			}
			now.Size = int64(len(file))
			if c.err != nil {
				now = Position{}
			}
			var reads int64
			read := func(at Position, off int64, b []byte) bool {
				require.Equal(t, now, at)
				reads += int64(len(b))
				if off < 0 || off+int64(len(b)) > int64(len(file)) {
					return false
				}
				copy(b, file[off:])
				return true
			}
			if c.noRead {
				read = nil
			}
			e := ents
			if c.ents != nil {
				e = c.ents
			}
			j, end := flightDone(e, c.st, now, c.err, read)
			assert.Equal(t, c.j, j)
			assert.Equal(t, c.end, end)
			assert.LessOrEqual(t, reads, int64(10+20+5), "reads stay within the batch's inline records")
		})
	}
}

// A large batch is read back in chunks of at most flightReadChunk bytes (or
// one record), never in one read of the whole batch.
func TestFlightDoneReadsInBoundedChunks(t *testing.T) {
	var ents []ringEntry
	var file []byte
	for i := range 5 {
		rec := append(bytes.Repeat([]byte{byte('a' + i)}, 600<<10-1), '\n')
		ents = append(ents, ringEntry{kind: entRecord, data: rec, size: uint64(len(rec))})
		if i < 3 {
			file = append(file, rec...) // three records reached the output
		}
	}
	file = append(file, "starting\n"...) // then a banner
	st := ringState{size: 0, dev: 1, ino: 2}
	now := Position{Dev: 1, Ino: 2, Size: int64(len(file))}
	var reads []int
	read := func(_ Position, off int64, b []byte) bool {
		reads = append(reads, len(b))
		copy(b, file[off:])
		return off+int64(len(b)) <= int64(len(file))
	}
	j, end := flightDone(ents, st, now, nil, read)
	assert.Equal(t, 3, j)
	assert.Equal(t, flightForeign, end)
	require.Len(t, reads, 4, "one read per record here: two do not fit in a chunk")
	for _, n := range reads {
		assert.LessOrEqual(t, n, flightReadChunk)
	}
}

// FuzzRecover: arbitrary file bytes never panic, and recovery writes only
// records whose checksum matches their header word, in ring order.
func FuzzRecover(f *testing.F) {
	im := newImage(256)
	pos := im.record(0, []byte("a\n"))
	pos = im.record(pos, []byte("bb\n"))
	im.word(pos, tCommit|tOversize|99)
	im.st = State{End: pos, Size: unknownOutputSize}
	f.Add(im.bytes())
	im2 := newImage(64)
	im2.st = State{Head: 40, Zeroed: 40, End: 40}
	p2 := im2.record(40, []byte("wrap\n"))
	im2.word(p2, tCommit|tPadding|(64-p2%64))
	im2.record(p2+64-p2%64, []byte("x\n"))
	f.Add(im2.bytes())
	f.Add([]byte(ringMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := testOptions("fuzz", 0, &sink{}, &warnings{})
		im, err := parseImage(data, &o)
		if err != nil {
			return
		}
		// The expected replay: every valid record from head, checked here
		// against its own header word.
		var want []string
		limit := im.st.zeroed + im.capacity
		for pos := im.st.head; ; {
			e, _, ok := im.next(pos, limit)
			if !ok {
				break
			}
			if e.kind == entRecord {
				w := binary.LittleEndian.Uint64(im.ring[e.pos&im.mask:])
				require.Equal(t, (w>>tSumShift)&sumMask, Sum(e.data, 0))
				require.Equal(t, w&tLenMask, uint64(len(e.data)))
				want = append(want, string(e.data))
			}
			pos = e.end
		}
		// The real recovery, on an 8-byte-aligned copy.
		words := make([]uint64, (len(data)+7)/8)
		buf := unsafeBytes(words)[:len(data)]
		copy(buf, data)
		out := &sink{}
		o = testOptions("fuzz", im.capacity, out, &warnings{})
		r := &File{path: "fuzz", data: buf, capacity: im.capacity, st: im.st, gen: im.gen, o: &o}
		_, err = r.recover()
		require.NoError(t, err)
		got := out.recs
		// An in-flight batch without a sink position is replayed whole, which
		// the scan above also lists: the two agree exactly.
		assert.Equal(t, want, got)
		r.reset()
		_, err = parseImage(buf, &o)
		require.NoError(t, err)
	})
}

// unsafeBytes views words as bytes (an 8-byte-aligned buffer for the fuzz
// target's ring file image). unsafe: same memory, length in bytes.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

// An output whose bytes cannot be read back (here: a reader that fails) is
// not trusted by its size: the interrupted batch is replayed whole and the
// warning says why.
func TestUnreadableOutputReplaysWholeBatch(t *testing.T) {
	const capacity = 4096
	dir := t.TempDir()
	ringPath, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(outPath, []byte("earlier\n"), 0o644))
	before, err := PathPosition(outPath)
	require.NoError(t, err)
	im := newImage(capacity)
	pos := uint64(0)
	for i := range 4 {
		pos = im.record(pos, line(i))
	}
	im.st = State{End: pos, Size: before.Size, Dev: before.Dev, Ino: before.Ino}
	require.NoError(t, os.WriteFile(ringPath, im.bytes(), 0o600))
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer out.Close()
	_, err = out.Write(line(0)) // the first record reached the file
	require.NoError(t, err)

	log := &warnings{}
	o := testOptions(ringPath, capacity, &sink{}, log)
	o.Write = func(recs [][]byte) error {
		_, err := out.Write(bytes.Join(recs, nil))
		return err
	}
	o.Position, o.Cut = FilePosition(out), FileCutter(out)
	o.Read = func(Position, int64, []byte) bool { return false } // unreadable
	r, res, err := Open(o)
	require.NoError(t, err)
	r.Close()
	assert.Equal(t, uint64(4), res.Recovered, "the whole batch, the record in the file too")
	got, err := os.ReadFile(outPath)
	require.NoError(t, err)
	assert.Equal(t, "earlier\n"+string(line(0))+string(line(0))+string(line(1))+string(line(2))+string(line(3)), string(got))
	errs := log.errs
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Reason, "replayed whole (the output could not be read back")
	assert.Contains(t, errs[0].Reason, "up to 4 records may appear twice")
}
