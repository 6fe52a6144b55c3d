//go:build unix

package bus

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{name: "oversize of unknown length", ents: []ringEntry{ents[0], {kind: entOversize, size: lenMask}}, st: st, after: recA, j: 0, end: flightUnknown},
		{name: "unknown before", st: ringState{size: unknownOutputSize}, after: recA, j: 0, end: flightUnknown},
		{name: "unknown now", st: st, err: errors.New("gone"), j: 0, end: flightUnknown},
		{name: "cannot be read back", st: st, after: recA, noRead: true, j: 0, end: flightUnread},
		{name: "nothing written needs no reading", st: st, noRead: true, j: 0, end: flightExact},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file, now := cat(earlier, c.after), OutputPosition{Dev: 1, Ino: 2}
			if c.rotated {
				file, now.Ino = c.after, 3
			}
			now.Size = int64(len(file))
			if c.err != nil {
				now = OutputPosition{}
			}
			var reads int64
			read := func(at OutputPosition, off int64, b []byte) bool {
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
	now := OutputPosition{Dev: 1, Ino: 2, Size: int64(len(file))}
	var reads []int
	read := func(_ OutputPosition, off int64, b []byte) bool {
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
	im.word(pos, flagCommit|flagOversize|99)
	im.st = ringState{end: pos, size: unknownOutputSize}
	f.Add(im.bytes())
	im2 := newImage(64)
	im2.st = ringState{head: 40, zeroed: 40, end: 40}
	p2 := im2.record(40, []byte("wrap\n"))
	im2.word(p2, flagCommit|flagPadding|(64-p2%64))
	im2.record(p2+64-p2%64, []byte("x\n"))
	f.Add(im2.bytes())
	f.Add([]byte(ringMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := parseImage(data)
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
				require.Equal(t, (w>>sumShift)&sumMask, recordSum(e.data))
				require.Equal(t, w&lenMask, uint64(len(e.data)))
				want = append(want, string(e.data))
			}
			pos = e.end
		}
		// The real recovery, on an 8-byte-aligned copy.
		words := make([]uint64, (len(data)+7)/8)
		buf := unsafeBytes(words)[:len(data)]
		copy(buf, data)
		r := &ringFile{path: "fuzz", data: buf, capacity: im.capacity, st: im.st, gen: im.gen}
		sink := &batchSink{}
		_, err = r.recover(sink, 16)
		require.NoError(t, err)
		got := strs(sink.records())
		// An in-flight batch without a sink position is replayed whole, which
		// the scan above also lists: the two agree exactly.
		assert.Equal(t, want, got)
		r.reset()
		_, err = parseImage(buf)
		require.NoError(t, err)
	})
}

// unsafeBytes views words as bytes (an 8-byte-aligned buffer for the fuzz
// target's ring file image). unsafe: same memory, length in bytes.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

// gatedFile is a file sink (it has Path) whose call number block writes the
// first keep records of the batch, then waits for gate, then the rest.
type gatedFile struct {
	f       *os.File
	first   []byte // the blocked call is the one whose data starts with first
	keep    int
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFile) Path() string { return g.f.Name() }

func (g *gatedFile) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, g.first) {
		return g.f.Write(p)
	}
	cut := 0
	for range min(g.keep, bytes.Count(p, []byte("\n"))) {
		cut += bytes.IndexByte(p[cut:], '\n') + 1
	}
	if _, err := g.f.Write(p[:cut]); err != nil {
		return 0, err
	}
	close(g.entered)
	<-g.gate
	n, err := g.f.Write(p[cut:])
	return cut + n, err
}

// TestRingFileInterruptedBatchExactlyOnce freezes the drainer in the middle
// of a batch, takes a crash image of the ring file and of the output (the
// page cache is what a killed process leaves), and recovers from it: every
// record is in the output exactly once, in order.
func TestRingFileInterruptedBatchExactlyOnce(t *testing.T) {
	for _, keep := range []int{0, 1, 7} {
		t.Run(fmt.Sprint("keep=", keep), func(t *testing.T) {
			dir := t.TempDir()
			ringPath, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
			out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			require.NoError(t, err)
			defer out.Close()
			g := &gatedFile{f: out, first: line(10), keep: keep, entered: make(chan struct{}), gate: make(chan struct{})}
			b, _ := openDurable(t, ringPath, g, Config{Capacity: 8192, minBatch: 30, MaxLatency: time.Minute})
			const n = 40
			var want []byte
			for i := range 10 {
				require.NoError(t, b.Enqueue(line(i)))
				want = append(want, line(i)...)
			}
			require.NoError(t, b.Flush(context.Background())) // call 1
			for i := 10; i < n; i++ {
				require.NoError(t, b.Enqueue(line(i)))
				want = append(want, line(i)...)
			}
			<-g.entered // call 2 has written keep records and is frozen
			ringImg, err := os.ReadFile(ringPath)
			require.NoError(t, err)
			outImg, err := os.ReadFile(outPath)
			require.NoError(t, err)
			orig, err := pathPosition(outPath)
			require.NoError(t, err)
			close(g.gate)
			closeBus(t, b)

			// Recover the image into a copy of the output; the copy stands for
			// the same file, so report the original's identity.
			ring2, out2Path := filepath.Join(dir, "ring2"), filepath.Join(dir, "out2")
			require.NoError(t, os.WriteFile(ring2, ringImg, 0o600))
			require.NoError(t, os.WriteFile(out2Path, outImg, 0o644))
			out2, err := os.OpenFile(out2Path, os.O_WRONLY|os.O_APPEND, 0o644)
			require.NoError(t, err)
			defer out2.Close()
			pos := func() (OutputPosition, error) {
				p, err := pathPosition(out2Path)
				p.Dev, p.Ino = orig.Dev, orig.Ino
				return p, err
			}
			b2, log := openDurable(t, ring2, out2, Config{Capacity: 8192, outputPosition: pos})
			closeBus(t, b2)
			got, err := os.ReadFile(out2Path)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			inOut := bytes.Count(outImg, []byte("\n"))
			assert.GreaterOrEqual(t, inOut, 10)
			assert.Equal(t, uint64(n-inOut), b2.Stats().Recovered)
			assert.Empty(t, log.ringErrors())
		})
	}
}

func TestRingFileSinkFailureKeepsRecords(t *testing.T) {
	const capacity = 1024
	path := filepath.Join(t.TempDir(), "ring")
	im := newImage(capacity)
	pos := uint64(0)
	var want []string
	for i := range 6 {
		pos = im.record(pos, line(i))
		want = append(want, string(line(i)))
	}
	require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))
	boom := errors.New("disk on fire")
	failing := &batchSink{fail: func(int) error { return boom }}
	_, err := testNew(failing, Config{RingFile: path, Capacity: capacity})
	require.ErrorIs(t, err, boom)
	written := strs(failing.records()) // a short write of the first half
	require.Equal(t, want[:3], written)

	// The file still holds the rest; the next start replays exactly that
	// (the position of a batchSink is unknown: the interrupted batch is
	// replayed whole, so with a positionless sink the first half repeats).
	sink := &batchSink{}
	b, log := openDurable(t, path, sink, Config{Capacity: capacity})
	closeBus(t, b)
	assert.Equal(t, want, strs(sink.records()))
	require.NotEmpty(t, log.ringErrors(), "the possible duplicates are reported")
}

// Issue 13 item 10: a kill -9 during the write of a batch to a plain
// *os.File leaves the beginning of a record at the file's end. Recovery cuts
// it back before replaying, so the record is written whole, once, and no
// line is torn; when the tail is not exactly that fragment (the file
// changed since, or it cannot be told), the file is left alone and the
// replay is reported.
func TestRingFileCutsTornRecordOfPlainFile(t *testing.T) {
	const capacity = 4096
	recs := make([][]byte, 8)
	for i := range recs {
		recs[i] = []byte(fmt.Sprintf(`{"msg":"twö","seq":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 10+i)))
	}
	const earlier = "earlier\n"
	marker := []byte(`{"level":"WARN","msg":"asyncbus: records dropped","dropped":3}` + "\n")
	type tc struct {
		name      string
		flags     int
		seekEnd   bool
		pre       []byte // drop marker written in front of the batch
		whole     int    // records of the batch wholly in the file
		frag      int    // bytes of the next piece (marker or record) after them
		foreign   string // appended by someone else after the crash
		wantCut   bool
		wantWarns int
		warning   string // in the warning, if any
	}
	cases := []tc{
		{name: "O_APPEND write-only, torn in the third record", flags: os.O_WRONLY | os.O_APPEND, whole: 2, frag: 9, wantCut: true},
		{name: "O_APPEND read-write, torn in the first record", flags: os.O_RDWR | os.O_APPEND, whole: 0, frag: 1, wantCut: true},
		{name: "not O_APPEND, offset at the end", flags: os.O_WRONLY, seekEnd: true, whole: 4, frag: 20, wantCut: true},
		{name: "torn in the drop marker", flags: os.O_WRONLY | os.O_APPEND, pre: marker, whole: 0, frag: 30, wantCut: true, wantWarns: 1},
		{name: "marker whole, torn in a record", flags: os.O_WRONLY | os.O_APPEND, pre: marker, whole: 1, frag: 5, wantCut: true},
		{name: "foreign bytes after the fragment", flags: os.O_WRONLY | os.O_APPEND, whole: 2, frag: 9, foreign: "other", wantWarns: 1,
			warning: "2 of its 5 records were there"},
		{name: "not O_APPEND, offset elsewhere", flags: os.O_WRONLY, whole: 2, frag: 9, wantWarns: 1, warning: "could not be cut back"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ringPath, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
			require.NoError(t, os.WriteFile(outPath, []byte(earlier), 0o644))
			before, err := pathPosition(outPath)
			require.NoError(t, err)

			// The ring: records 0-4 were the batch in flight, 5-7 came after.
			require.NoError(t, os.WriteFile(ringPath, inFlightImage(capacity, recs, 5, len(c.pre), before), 0o600))

			// What the killed write left in the output.
			crash := append([]byte(nil), c.pre...)
			next := c.pre
			if c.pre == nil || c.whole > 0 || c.frag >= len(c.pre) {
				for _, r := range recs[:c.whole] {
					crash = append(crash, r...)
				}
				next = recs[c.whole]
			} else {
				crash = nil
			}
			crash = append(crash, next[:c.frag]...)
			crash = append(crash, c.foreign...)
			f, err := os.OpenFile(outPath, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write(crash)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			out, err := os.OpenFile(outPath, c.flags, 0)
			require.NoError(t, err)
			defer out.Close()
			if c.seekEnd {
				_, err = out.Seek(0, io.SeekEnd)
				require.NoError(t, err)
			}
			b, log := openDurable(t, ringPath, out, Config{Capacity: capacity})
			require.NoError(t, b.Enqueue([]byte("after\n")))
			closeBus(t, b)
			got, err := os.ReadFile(outPath)
			require.NoError(t, err)
			var want []byte
			if c.wantCut {
				want = []byte(earlier)
				if c.pre != nil && (c.whole > 0 || c.frag >= len(c.pre)) {
					want = append(want, c.pre...)
				}
				for _, r := range recs {
					want = append(want, r...)
				}
				want = append(want, "after\n"...)
				assert.Equal(t, string(want), string(got), "every record exactly once, no torn line")
				assert.Equal(t, uint64(len(recs)-c.whole), b.Stats().Recovered)
			} else {
				// Left alone: never shortened; when appending, the fragment (and
				// the foreign bytes) stay and the replay follows them. (Without
				// O_APPEND the writer's own offset decides where bytes go.)
				assert.GreaterOrEqual(t, len(got), len(earlier)+len(crash), "the file was not cut")
				if c.flags&os.O_APPEND != 0 {
					// The records the file holds whole are not written again;
					// the replay starts with the record torn (or not found).
					want := append([]byte(earlier), crash...)
					for _, r := range recs[c.whole:] {
						want = append(want, r...)
					}
					want = append(want, "after\n"...)
					assert.Equal(t, string(want), string(got), "the file was not cut, and the replay follows it")
				}
				assert.Equal(t, uint64(len(recs)-c.whole), b.Stats().Recovered)
			}
			errs := log.ringErrors()
			assert.Len(t, errs, c.wantWarns, "%v", errs)
			if c.warning != "" && len(errs) > 0 {
				assert.Contains(t, errs[0].Reason, c.warning)
			}
		})
	}
}

// Something else appends to the log file between the crash and the restart
// (a wrapper's `echo starting >> app.log`, another handler's first line)
// while a batch was in flight: recovery checks the output's bytes, so the
// banner is never taken for the batch's records, whatever its length. The
// records found in the file are not written again, every other one is
// replayed after the banner, and a warning says so.
func TestRingFileForeignBytesBeforeRestartAreNotRecords(t *testing.T) {
	const capacity = 4096
	recs := make([][]byte, 6)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"msg":"accepted","seq":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 10+i))
	}
	const earlier = "earlier\n"
	banner := func(n int) string { return strings.Repeat("=", n-1) + "\n" }
	type tc struct {
		name    string
		whole   int    // records of the batch written before the crash
		foreign string // appended after the crash, before the restart
	}
	var cases []tc
	for _, whole := range []int{0, 2} {
		next := len(recs[whole]) // the first record not written
		for _, b := range []struct {
			name string
			n    int
		}{
			{"shorter than a record", len("starting\n")},
			{"exactly one record", next},
			{"exactly two records", next + len(recs[whole+1])},
			{"a record and a bit", next + 5},
		} {
			cases = append(cases, tc{name: fmt.Sprintf("%d written, banner %s", whole, b.name), whole: whole, foreign: banner(b.n)})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ringPath, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
			require.NoError(t, os.WriteFile(outPath, []byte(earlier), 0o644))
			before, err := pathPosition(outPath)
			require.NoError(t, err)
			// The whole ring was the batch in flight.
			require.NoError(t, os.WriteFile(ringPath, inFlightImage(capacity, recs, len(recs), 0, before), 0o600))

			out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			defer out.Close()
			crash := bytes.Join(recs[:c.whole], nil) // what the killed write left
			_, err = out.Write(append(crash, c.foreign...))
			require.NoError(t, err)

			b, log := openDurable(t, ringPath, out, Config{Capacity: capacity})
			st := b.Stats()
			closeBus(t, b)
			got, err := os.ReadFile(outPath)
			require.NoError(t, err)
			want := earlier + string(crash) + c.foreign + string(bytes.Join(recs[c.whole:], nil))
			assert.Equal(t, want, string(got), "every accepted record exactly once, the rest after the banner")
			assert.Equal(t, uint64(len(recs)-c.whole), st.Recovered)
			assert.Zero(t, st.Unrecovered)
			errs := log.ringErrors()
			require.Len(t, errs, 1, "%v", errs)
			assert.Contains(t, errs[0].Reason, "other bytes where the batch being written at the crash belonged")
			assert.Contains(t, errs[0].Reason, fmt.Sprintf("%d of its %d records were there", c.whole, len(recs)))
			assert.Contains(t, errs[0].Reason, fmt.Sprintf("%q", recs[c.whole]))
			assert.Contains(t, errs[0].Reason, "appears twice")
		})
	}
}

// An output whose bytes cannot be read back (here: a reader that fails) is
// not trusted by its size: the interrupted batch is replayed whole and the
// warning says why.
func TestRingFileUnreadableOutputReplaysWholeBatch(t *testing.T) {
	const capacity = 4096
	dir := t.TempDir()
	ringPath, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(outPath, []byte("earlier\n"), 0o644))
	before, err := pathPosition(outPath)
	require.NoError(t, err)
	im := newImage(capacity)
	pos := uint64(0)
	for i := range 4 {
		pos = im.record(pos, line(i))
	}
	im.st = ringState{end: pos, size: before.Size, dev: before.Dev, ino: before.Ino}
	require.NoError(t, os.WriteFile(ringPath, im.bytes(), 0o600))
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer out.Close()
	_, err = out.Write(line(0)) // the first record reached the file
	require.NoError(t, err)

	log := &errLog{}
	unreadable := func(OutputPosition, int64, []byte) bool { return false }
	r, res, err := openRing(ringPath, capacity, out, filePosition(out), fileCutter(out), unreadable, 16, log.on, nil, nil)
	require.NoError(t, err)
	r.close()
	assert.Equal(t, uint64(4), res.recovered, "the whole batch, the record in the file too")
	got, err := os.ReadFile(outPath)
	require.NoError(t, err)
	assert.Equal(t, "earlier\n"+string(line(0))+string(line(0))+string(line(1))+string(line(2))+string(line(3)), string(got))
	errs := log.ringErrors()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Reason, "replayed whole (the output could not be read back")
	assert.Contains(t, errs[0].Reason, "up to 4 records may appear twice")
}
