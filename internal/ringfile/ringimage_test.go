//go:build unix

package ringfile

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRingFileCorruptFiles: damaged or foreign files are renamed aside with a
// warning; nothing of them reaches the sink and the file starts fresh.
func TestOpenCorruptFiles(t *testing.T) {
	const capacity = 1024
	valid := func() []byte {
		im := newImage(capacity)
		pos := uint64(0)
		for i := range 10 {
			pos = im.record(pos, line(i))
		}
		im.st = State{End: 0}
		return im.bytes()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, HeaderSize+capacity)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(valid()) }
	le64 := binary.LittleEndian.PutUint64
	resum := func(b []byte) { // re-seal the state slot after changing it
		var w [7]uint64
		for i := range w {
			w[i] = binary.LittleEndian.Uint64(b[ringSlot0+8*i:])
		}
		le64(b[ringSlot0+56:], stateCRC(w))
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"truncated to 100 bytes", valid()[:100]},
		{"truncated in the ring", valid()[:HeaderSize+capacity/2]},
		{"extended", append(valid(), 0)},
		{"random bytes", random},
		{"a text log", []byte(strings.Repeat("time=now level=INFO msg=hello\n", 200))},
		{"wrong magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"future version", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], Version+1)
			binary.LittleEndian.PutUint32(b[ringStaticCRC:], 0)
			return b
		})},
		{"bad header checksum", mutate(func(b []byte) []byte { b[ringStaticCRC] ^= 1; return b })},
		{"capacity not matching the size", mutate(func(b []byte) []byte {
			h := staticHeader(2 * capacity)
			copy(b, h)
			return b
		})},
		{"bad state checksum", mutate(func(b []byte) []byte { b[ringSlot0] ^= 8; return b })},
		{"bad sequence slot checksum", mutate(func(b []byte) []byte { b[ringSeqSlot0] ^= 8; return b })},
		{"head beyond end", mutate(func(b []byte) []byte { le64(b[ringSlot0:], 64); resum(b); return b })},
		{"unaligned cursor", mutate(func(b []byte) []byte {
			le64(b[ringSlot0:], 3)
			le64(b[ringSlot0+16:], 3)
			resum(b)
			return b
		})},
		{"in-flight batch longer than the ring", mutate(func(b []byte) []byte { le64(b[ringSlot0+16:], 2*capacity); resum(b); return b })},
		{"header zero, ring not", mutate(func(b []byte) []byte { clear(b[:HeaderSize]); return b })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ring")
			require.NoError(t, os.WriteFile(path, c.data, 0o600))
			out, log := &sink{}, &warnings{}
			r, res, err := Open(testOptions(path, capacity, out, log))
			require.NoError(t, err)
			assert.Empty(t, out.recs, "nothing of a corrupt file is replayed")
			assert.Zero(t, res.Recovered)
			errs := log.errs
			require.Len(t, errs, 1)
			assert.Equal(t, path, errs[0].Path)
			require.NotEmpty(t, errs[0].Aside)
			kept, err := os.ReadFile(errs[0].Aside)
			require.NoError(t, err)
			assert.Equal(t, c.data, kept, "the damaged file is kept unchanged")
			r.Close()
			fresh, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, Check(fresh, testNumbering{}), "a fresh, valid ring file replaced it")
		})
	}
}

// TestSeqChecksumSkipsHeadroom: a numbering producer's checksum leaves the
// headroom out, so a number the drainer writes there keeps the record
// valid; a changed line byte does not.
func TestSeqChecksumSkipsHeadroom(t *testing.T) {
	o := testOptions("", 0, &sink{}, &warnings{})
	im := &ringImage{seq: 1, o: &o}
	p := append([]byte(strings.Repeat("#", testRoom)), `{"i":1}`+"\n"...)
	sum := Sum(p, testRoom)
	testNumbering{}.Number(1, "deadbeefdeadbeef", 9, p)
	ok, first := im.sumMatches(p, sum)
	assert.True(t, ok)
	assert.Equal(t, int('{'), first, "the prefix's comma stands where the brace was")
	p[len(p)-3] ^= 1
	ok, _ = im.sumMatches(p, sum)
	assert.False(t, ok)
	assert.Equal(t, Sum(p[:10], 0), Sum(p[:10], testRoom), "a record without the room is summed whole")
}
