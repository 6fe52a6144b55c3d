//go:build unix

package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
			orig, err := ringfile.PathPosition(outPath)
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
				p, err := ringfile.PathPosition(out2Path)
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

// A kill -9 during the write of a batch to a plain
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
			before, err := ringfile.PathPosition(outPath)
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
			before, err := ringfile.PathPosition(outPath)
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
