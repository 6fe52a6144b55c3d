//go:build unix

package bus

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// image builds ring file images by hand (for gaps, junk and corruption),
// with this package's header words in the ring.
type image struct {
	capacity uint64
	version  uint32 // the file format (ringfile.Version unless set)
	data     []byte // header page (filled by bytes), then the ring
	st       ringfile.State
}

func newImage(capacity uint64) *image {
	return &image{capacity: capacity, version: ringfile.Version, data: make([]byte, ringfile.HeaderSize+capacity)}
}

func (im *image) word(pos, w uint64) {
	binary.LittleEndian.PutUint64(im.data[ringfile.HeaderSize+pos&(im.capacity-1):], w)
}

// record writes a committed record at pos and returns the next position.
func (im *image) record(pos uint64, p []byte) uint64 {
	off := ringfile.HeaderSize + pos&(im.capacity-1)
	copy(im.data[off+hdrSize:], p)
	im.word(pos, flagCommit|recordSum(p)<<sumShift|uint64(len(p)))
	return pos + align8(hdrSize+uint64(len(p)))
}

// inFlightImage returns the ring file a crash leaves when recs are in the
// ring and the first batch of them (with pre bytes of drop marker ahead)
// were being written to an output that was at position before.
func inFlightImage(capacity uint64, recs [][]byte, batch, pre int, before OutputPosition) []byte {
	im := newImage(capacity)
	pos, batchEnd := uint64(0), uint64(0)
	for i, r := range recs {
		pos = im.record(pos, r)
		if i == batch-1 {
			batchEnd = pos
		}
	}
	im.st = ringfile.State{End: batchEnd, Pre: uint64(pre), Size: before.Size, Dev: before.Dev, Ino: before.Ino}
	return im.bytes()
}

// bytes returns the image with im.st as its current state.
func (im *image) bytes() []byte {
	out := bytes.Clone(im.data)
	copy(out, ringfile.Header(im.capacity, im.version, im.st))
	return out
}

// recordSum and seqRecordSum are the checksums producers commit without
// and with numbers.
func recordSum(p []byte) uint64    { return ringfile.Sum(p, 0) }
func seqRecordSum(p []byte) uint64 { return ringfile.Sum(p, SeqRoom) }

// unknownOutputSize is a state's output size when it was not known.
const unknownOutputSize = -1

// deadRunOf is the numbering of the run whose records a file in state st
// holds, as it stands at head.
func deadRunOf(st ringfile.State) seqnum.State {
	return seqnum.State{Format: SeqFormat(st.SeqFormat), Run: string(st.SeqRun[:]), Next: st.SeqNext + st.SeqMark}
}

func TestRecordSumInHeaderWord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring")
	sink := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b, _ := openDurable(t, path, sink, Config{Capacity: 4096, minBatch: 1})
	require.NoError(t, b.Enqueue([]byte("first\n")))
	<-sink.entered // the drainer is stuck in the sink with "first"
	p := []byte("checksummed\n")
	require.NoError(t, b.Enqueue(p))
	w := binary.LittleEndian.Uint64(b.mem[16:]) // "first\n" took 16 bytes
	assert.Equal(t, flagCommit|recordSum(p)<<sumShift|uint64(len(p)), w)
	close(sink.gate)
	closeBus(t, b)
}

// TestRingFileReplaysImages runs recovery on hand-built images: records, a
// wrap, never-committed reservations (zero header, with and without junk
// payload), oversize references and an interrupted batch.
func TestRingFileReplaysImages(t *testing.T) {
	const capacity = 1024
	type tc struct {
		name        string
		build       func(im *image) []string // returns the expected replay
		unrecovered uint64
		suspects    bool
	}
	cases := []tc{
		{name: "empty", build: func(*image) []string { return nil }},
		{name: "records", build: func(im *image) []string {
			var want []string
			pos := uint64(0)
			for i := range 5 {
				pos = im.record(pos, line(i))
				want = append(want, string(line(i)))
			}
			return want
		}},
		{name: "from persisted head, after a wrap", build: func(im *image) []string {
			// Consumed, zeroed space below head; records from 1000 on, a
			// padding entry at the end of the region, records after the wrap.
			im.st = ringfile.State{Head: 2000, Zeroed: 2000, End: 2000}
			pos := im.record(2000, line(1)) // 2000 = offset 976; 24+8 bytes
			im.word(pos, flagCommit|flagPadding|(capacity-pos%capacity))
			pos += capacity - pos%capacity
			pos = im.record(pos, line(2))
			im.record(pos, line(3))
			return []string{string(line(1)), string(line(2)), string(line(3))}
		}},
		{name: "dead reservations are skipped", build: func(im *image) []string {
			pos := im.record(0, line(1))
			// A reservation of 64 bytes whose producer died before copying.
			pos += 64
			pos = im.record(pos, line(2))
			// One that died half-way through the copy: text junk, no header.
			copy(im.data[ringfile.HeaderSize+pos+hdrSize:], "half a line of text that was never committ")
			pos += 64
			pos = im.record(pos, line(3))
			// One that died after the copy, before the header store.
			copy(im.data[ringfile.HeaderSize+pos+hdrSize:], line(4))
			pos += align8(hdrSize + uint64(len(line(4))))
			im.record(pos, line(5))
			return []string{string(line(1)), string(line(2)), string(line(3)), string(line(5))}
		}},
		{name: "oversize references are counted", build: func(im *image) []string {
			pos := im.record(0, line(1))
			im.word(pos, flagCommit|flagOversize|5000)
			pos += hdrSize
			im.record(pos, line(2))
			return []string{string(line(1)), string(line(2))}
		}, unrecovered: 1},
		{name: "space beyond zeroed+capacity is not scanned", build: func(im *image) []string {
			// The dead drainer had written [0, 512), persisted head=512 but
			// died while zeroing: the old records are still there.
			pos := uint64(0)
			for i := 0; pos < 512; i++ {
				pos = im.record(pos, line(100+i))
			}
			im.st = ringfile.State{Head: pos, Zeroed: 0, End: pos}
			im.record(pos, line(1))
			return []string{string(line(1))}
		}},
		{name: "in-flight batch with unknown sink position is replayed whole", build: func(im *image) []string {
			pos := im.record(0, line(1))
			pos = im.record(pos, line(2))
			im.st = ringfile.State{End: pos, Size: unknownOutputSize}
			im.record(pos, line(3))
			return []string{string(line(1)), string(line(2)), string(line(3))}
		}},
		{name: "a record with a bad checksum is not replayed", build: func(im *image) []string {
			pos := im.record(0, line(1))
			bad := im.record(pos, line(2))
			im.data[ringfile.HeaderSize+pos+hdrSize] ^= 1 // flip a payload bit
			im.record(bad, line(3))
			return []string{string(line(1)), string(line(3))}
		}, suspects: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ring")
			im := newImage(capacity)
			want := c.build(im)
			require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))
			sink := &batchSink{}
			b, log := openDurable(t, path, sink, Config{Capacity: capacity})
			st := b.Stats()
			// Replay happened inside New, before anything new was accepted.
			assert.Equal(t, want, strs(sink.records()))
			assert.Equal(t, uint64(len(want)), st.Recovered)
			assert.Equal(t, c.unrecovered, st.Unrecovered)
			require.NoError(t, b.Enqueue([]byte("after\n")))
			closeBus(t, b)
			assert.Equal(t, append(want, "after\n"), strs(sink.records()))
			asides, _ := filepath.Glob(path + ".corrupt-*")
			if c.suspects {
				assert.Len(t, asides, 1, "a copy of the damaged file is kept")
				assert.NotEmpty(t, log.ringErrors())
			} else {
				assert.Empty(t, asides)
			}
			// After a clean close the file replays nothing.
			sink2 := &batchSink{}
			b2, _ := openDurable(t, path, sink2, Config{Capacity: capacity})
			closeBus(t, b2)
			assert.Empty(t, sink2.records())
		})
	}
}

// A producer killed while copying a non-ASCII record (its
// Handle never returned) leaves a zero header and payload words with the
// commit bit set. That is a dead reservation, not damage: no warning, no
// .corrupt copy, every committed record replayed, nothing counted as lost.
func TestRingFileDeadNonASCIIReservationIsQuiet(t *testing.T) {
	const capacity = 4096
	utf8 := []byte(strings.Repeat("größe ✓ 日本語 ÿþ ", 20)) // many words with the top bit set
	rng := rand.New(rand.NewPCG(13, 11))
	random := make([]byte, 600)
	for i := range random {
		random[i] = byte(rng.Uint32()) | 0x80
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		copied  int // bytes the producer had copied when it died
	}{
		{"utf-8, half copied", utf8, len(utf8) / 2},
		{"utf-8, copied whole, header never stored", utf8, len(utf8)},
		{"high bytes, copied whole", random, len(random)},
		{"high bytes, one word copied", random, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ring")
			im := newImage(capacity)
			var want []string
			pos := uint64(0)
			for i := range 3 {
				pos = im.record(pos, line(i))
				want = append(want, string(line(i)))
			}
			// The dead reservation: zero header, part of the payload.
			copy(im.data[ringfile.HeaderSize+pos+hdrSize:], tc.payload[:tc.copied])
			pos += align8(hdrSize + uint64(len(tc.payload)))
			// Producers that reserved after it committed.
			for i := 3; i < 6; i++ {
				pos = im.record(pos, line(i))
				want = append(want, string(line(i)))
			}
			// A second dead one at the end, then free space.
			copy(im.data[ringfile.HeaderSize+pos+hdrSize:], tc.payload[:tc.copied])
			require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))

			sink := &batchSink{}
			b, log := openDurable(t, path, sink, Config{Capacity: capacity})
			assert.Equal(t, want, strs(sink.records()), "every committed record, in order")
			st := b.Stats()
			assert.Equal(t, uint64(len(want)), st.Recovered)
			assert.Zero(t, st.Unrecovered, "a record that was never accepted is not lost")
			closeBus(t, b)
			assert.Empty(t, log.ringErrors(), "no alarm for a dead reservation")
			asides, _ := filepath.Glob(path + ".corrupt-*")
			assert.Empty(t, asides, "no .corrupt copy")
		})
	}
}

// A damaged header at an entry boundary is still damage, counted once (not
// once per word of its payload), and the valid records around it replay.
func TestRingFileDamagedHeaderCountedOnce(t *testing.T) {
	const capacity = 4096
	path := filepath.Join(t.TempDir(), "ring")
	im := newImage(capacity)
	pos := im.record(0, line(1))
	long := []byte(strings.Repeat("ü", 100) + "\n")
	bad := im.record(pos, long)
	im.data[ringfile.HeaderSize+pos+hdrSize+50] ^= 1 // its checksum no longer matches
	im.record(bad, line(2))
	require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))
	sink := &batchSink{}
	b, log := openDurable(t, path, sink, Config{Capacity: capacity})
	closeBus(t, b)
	assert.Equal(t, []string{string(line(1)), string(line(2))}, strs(sink.records()))
	errs := log.ringErrors()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Reason, "1 damaged entry was")
	assert.NotEmpty(t, errs[0].Aside)
}
