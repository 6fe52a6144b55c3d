//go:build unix

package bus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/filesink"
)

// Kill -9 tore a record of the batch in
// flight to a filesink.File. The next filesink.Open moves the fragment
// aside; the durable ring then writes that record again, whole. The repair
// lost nothing, so it raises no alarm (and its side file goes); a torn
// fragment that no replay covers is still reported, once.
func TestRingFileReplayCoversFilesinkTornTail(t *testing.T) {
	const capacity = 4096
	recs := make([][]byte, 6)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"msg":"wörk","seq":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 20+i))
	}
	const earlier = "earlier\n"
	for _, tc := range []struct {
		name     string
		inFlight bool   // the ring says the batch recs[0:4] was being written
		frag     []byte // what the crash left after the whole records
		whole    int
		replayed bool // the fragment is the start of the record written again
		wrapped  bool // the batch begins with wrap padding: the ring's lap ended there
	}{
		{name: "torn in the third record of the batch", inFlight: true, whole: 2, frag: recs[2][:11], replayed: true},
		{name: "torn in the first record of the batch", inFlight: true, whole: 0, frag: recs[0][:1], replayed: true},
		{name: "torn in the first record after wrap padding", inFlight: true, wrapped: true, whole: 0, frag: recs[0][:9], replayed: true},
		{name: "torn in the second record after wrap padding", inFlight: true, wrapped: true, whole: 1, frag: recs[1][:9], replayed: true},
		{name: "fragment of something else", inFlight: true, whole: 2, frag: []byte(`{"other`)},
		{name: "nothing in flight", whole: 2, frag: recs[2][:11]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ringPath, logPath := filepath.Join(dir, "ring"), filepath.Join(dir, "app.log")
			require.NoError(t, os.WriteFile(logPath, []byte(earlier), 0o644))
			before, err := ringfile.PathPosition(logPath)
			require.NoError(t, err)
			im := newImage(capacity)
			start := uint64(0)
			if tc.wrapped {
				start = capacity - 16 // too little room for a record: it pads to the lap's end
				im.word(start, flagCommit|flagPadding|16)
			}
			pos := start + (-start)%capacity
			var batchEnd uint64
			for i, r := range recs {
				pos = im.record(pos, r)
				if i == 3 {
					batchEnd = pos
				}
			}
			if tc.inFlight {
				im.st = ringfile.State{Head: start, Zeroed: start, End: batchEnd, Size: before.Size, Dev: before.Dev, Ino: before.Ino}
			} else {
				// Records 0-1 were written (head after them); 2-5 wait in the ring.
				head := align8(hdrSize+uint64(len(recs[0]))) + align8(hdrSize+uint64(len(recs[1])))
				im.st = ringfile.State{Head: head, Zeroed: head, End: head}
				clear(im.data[ringfile.HeaderSize : ringfile.HeaderSize+head]) // consumed space is zero
			}
			require.NoError(t, os.WriteFile(ringPath, im.bytes(), 0o600))
			crash := []byte(earlier)
			for _, r := range recs[:tc.whole] {
				crash = append(crash, r...)
			}
			crash = append(crash, tc.frag...)
			require.NoError(t, os.WriteFile(logPath, crash, 0o644))

			var sinkErrs errLog
			f, err := filesink.Open(logPath, filesink.Options{OnError: sinkErrs.on})
			require.NoError(t, err)
			require.NotNil(t, f.Repaired(), "the torn tail was set aside")
			side := f.Repaired().SideFile
			b, ringErrs := openDurable(t, ringPath, f, Config{Capacity: capacity})
			closeBus(t, b)
			require.NoError(t, f.Close())

			got, err := os.ReadFile(logPath)
			require.NoError(t, err)
			want := earlier
			for _, r := range recs {
				want += string(r)
			}
			assert.Equal(t, want, string(got), "every record exactly once, no torn line")
			assert.Empty(t, ringErrs.ringErrors())
			r := f.Repaired()
			if tc.replayed {
				assert.True(t, r.Replayed)
				assert.Empty(t, sinkErrs.errs, "no alarm for a record the ring wrote again")
				assert.NoFileExists(t, side)
				return
			}
			assert.False(t, r.Replayed)
			require.Len(t, sinkErrs.errs, 1, "the lost fragment is reported once")
			var tr *filesink.TailRepair
			require.ErrorAs(t, sinkErrs.errs[0], &tr)
			assert.Equal(t, tc.frag, mustRead(t, side))
		})
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}

// A banner appended to a filesink.File's file between the crash and the
// restart, as long as the next record of the batch in flight: recovery
// reads the file back by its path, finds the banner is not that record and
// replays it (and the rest) after the banner, with a warning.
func TestRingFileFilesinkForeignBannerIsNotARecord(t *testing.T) {
	const capacity = 4096
	recs := make([][]byte, 4)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"msg":"wörk","seq":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", 20+i))
	}
	const earlier = "earlier\n"
	dir := t.TempDir()
	ringPath, logPath := filepath.Join(dir, "ring"), filepath.Join(dir, "app.log")
	require.NoError(t, os.WriteFile(logPath, []byte(earlier), 0o644))
	before, err := ringfile.PathPosition(logPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ringPath, inFlightImage(capacity, recs, len(recs), 0, before), 0o600))
	banner := strings.Repeat("=", len(recs[1])-1) + "\n"
	crash := earlier + string(recs[0]) + banner // record 0 was written, then the banner
	require.NoError(t, os.WriteFile(logPath, []byte(crash), 0o644))

	var sinkErrs errLog
	f, err := filesink.Open(logPath, filesink.Options{OnError: sinkErrs.on})
	require.NoError(t, err)
	require.Nil(t, f.Repaired(), "the file ends with a whole line")
	b, ringErrs := openDurable(t, ringPath, f, Config{Capacity: capacity})
	assert.Equal(t, uint64(3), b.Stats().Recovered)
	closeBus(t, b)
	require.NoError(t, f.Close())

	got, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.Equal(t, crash+string(recs[1])+string(recs[2])+string(recs[3]), string(got))
	errs := ringErrs.ringErrors()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Reason, "1 of its 4 records were there")
	assert.Empty(t, sinkErrs.errs)
}
