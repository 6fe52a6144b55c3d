//go:build unix

package bus

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const deadRun = "deadbeefdeadbeef"

// seqLine is record i as the handler enqueues it with numbers on: junk
// headroom (the producer leaves whatever its buffer held), then the line.
func seqLine(format SeqFormat, i int) []byte {
	l := fmt.Sprintf(`{"i":%d}`+"\n", i)
	if format == SeqKV {
		l = fmt.Sprintf("i=%d\n", i)
	}
	return append([]byte(strings.Repeat("#", SeqRoom)), l...)
}

// seqRecord commits p at pos as a producer of a numbering bus does and, if
// s is not nil, numbers it in place as the drainer's collect does.
func (im *image) seqRecord(pos uint64, p []byte, s *seqnum.State) uint64 {
	off := ringfile.HeaderSize + pos&(im.capacity-1)
	copy(im.data[off+hdrSize:], p)
	im.word(pos, flagCommit|seqRecordSum(p)<<sumShift|uint64(len(p)))
	if s != nil {
		s.Number(im.data[off+hdrSize : off+hdrSize+uint64(len(p))])
	}
	return pos + align8(hdrSize+uint64(len(p)))
}

// TestRingFileReplaysWithTheDeadRunsNumbers runs recovery on hand-built
// images of a numbering bus: records the dead drainer numbered and ones it
// had not collected, a batch in flight (in the output or not, behind a
// marker or not), wrap padding, an oversize reference and a marker owed by
// an interrupted recovery. The output gets the dead run's numbers, each
// once, gaps only under a marker; then the new run starts from 1.
func TestRingFileReplaysWithTheDeadRunsNumbers(t *testing.T) {
	const capacity = 1024
	type tc struct {
		name   string
		format SeqFormat
		// build fills the image (st.seqNext etc. preset to 5, the dead run)
		// and returns what the output held before the crash.
		build func(im *image, out *os.File) string
		want  []string // the output's lines after recovery, each "seq run rest"
		warns bool     // OnError hears of lost records
	}
	json := func(n int, i int) string { return fmt.Sprintf(`%d %s {"i":%d}`, n, deadRun, i) }
	kv := func(n int, i int) string { return fmt.Sprintf(`%d %s i=%d`, n, deadRun, i) }
	marker := func(n, lost int) string { // a marker line's own first key, no record's
		return fmt.Sprintf("drop_seq=%d run=%s drop_count=%d asyncbus: dropped %d records", n, deadRun, lost, lost)
	}
	cases := []tc{
		{name: "not collected", format: SeqJSON, build: func(im *image, _ *os.File) string {
			pos := uint64(0)
			for i := range 3 {
				pos = im.seqRecord(pos, seqLine(SeqJSON, i), nil)
			}
			return ""
		}, want: []string{json(5, 0), json(6, 1), json(7, 2)}},
		{name: "collected, then not", format: SeqJSON, build: func(im *image, _ *os.File) string {
			s := deadRunOf(im.st)
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			pos = im.seqRecord(pos, seqLine(SeqJSON, 1), &s)
			im.seqRecord(pos, seqLine(SeqJSON, 2), nil)
			return ""
		}, want: []string{json(5, 0), json(6, 1), json(7, 2)}},
		{name: "key=value", format: SeqKV, build: func(im *image, _ *os.File) string {
			s := deadRunOf(im.st)
			pos := im.seqRecord(0, seqLine(SeqKV, 0), &s)
			im.seqRecord(pos, seqLine(SeqKV, 1), nil)
			return ""
		}, want: []string{kv(5, 0), kv(6, 1)}},
		{name: "in flight, first record in the output", format: SeqJSON, build: func(im *image, out *os.File) string {
			s := deadRunOf(im.st)
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			pos = im.seqRecord(pos, seqLine(SeqJSON, 1), &s)
			im.flight(out, pos, 0, 0)
			im.seqRecord(pos, seqLine(SeqJSON, 2), nil)
			first := seqnum.State{Format: SeqJSON, Run: deadRun, Next: 5}
			return string(first.Number(seqLine(SeqJSON, 0)))
		}, want: []string{json(5, 0), json(6, 1), json(7, 2)}},
		{name: "in flight behind a marker the output lacks", format: SeqJSON, build: func(im *image, out *os.File) string {
			s := deadRunOf(im.st)
			s.Next += 3 // the marker took 5, 6 and 7
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			im.flight(out, pos, len(marker(5, 3)+"\n"), 3)
			return ""
		}, want: []string{marker(5, 3), json(8, 0)}},
		{name: "in flight behind a marker the output holds", format: SeqJSON, build: func(im *image, out *os.File) string {
			s := deadRunOf(im.st)
			s.Next += 3
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			m := marker(5, 3) + "\n"
			im.flight(out, pos, len(m), 3)
			return m
		}, want: []string{marker(5, 3), json(8, 0)}},
		{name: "wrap padding", format: SeqJSON, build: func(im *image, _ *os.File) string {
			s := deadRunOf(im.st)
			const head = 2*capacity + 880 // 80 bytes of record, 64 of padding
			im.st.Head, im.st.Zeroed, im.st.End = head, head, head
			pos := im.seqRecord(head, seqLine(SeqJSON, 0), &s)
			im.word(pos, flagCommit|flagPadding|(capacity-pos%capacity))
			pos += capacity - pos%capacity
			pos = im.seqRecord(pos, seqLine(SeqJSON, 1), &s)
			im.seqRecord(pos, seqLine(SeqJSON, 2), nil)
			return ""
		}, want: []string{json(5, 0), json(6, 1), json(7, 2)}},
		{name: "oversize reference", format: SeqJSON, build: func(im *image, _ *os.File) string {
			s := deadRunOf(im.st)
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			im.word(pos, flagCommit|flagOversize|5000)
			s.Next++
			pos += hdrSize
			im.seqRecord(pos, seqLine(SeqJSON, 2), &s)
			return ""
		}, want: []string{json(5, 0), marker(6, 1), json(7, 2)}, warns: true},
		{name: "a damaged entry leaves its number out", format: SeqJSON, build: func(im *image, _ *os.File) string {
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), nil)
			next := im.seqRecord(pos, seqLine(SeqJSON, 1), nil)
			im.data[ringfile.HeaderSize+pos+hdrSize+SeqRoom+2] ^= 1 // a line bit flipped (power loss)
			im.seqRecord(next, seqLine(SeqJSON, 2), nil)
			return ""
		}, want: []string{json(5, 0), json(7, 2)}, warns: true},
		{name: "an entry zeroed (a page never written back) takes no number", format: SeqJSON, build: func(im *image, _ *os.File) string {
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), nil)
			next := im.seqRecord(pos, seqLine(SeqJSON, 1), nil)
			clear(im.data[ringfile.HeaderSize+pos : ringfile.HeaderSize+next])
			im.seqRecord(next, seqLine(SeqJSON, 2), nil)
			return ""
		}, want: []string{json(5, 0), json(6, 2)}},
		{name: "in flight to an output of unknown position: again, same numbers", format: SeqJSON, build: func(im *image, out *os.File) string {
			s := deadRunOf(im.st)
			pos := im.seqRecord(0, seqLine(SeqJSON, 0), &s)
			pos = im.seqRecord(pos, seqLine(SeqJSON, 1), &s)
			im.flight(out, pos, 0, 0)
			im.st.Size = unknownOutputSize
			first := seqnum.State{Format: SeqJSON, Run: deadRun, Next: 5}
			return string(first.Number(seqLine(SeqJSON, 0)))
		}, want: []string{json(5, 0), json(5, 0), json(6, 1)}, warns: true},
		{name: "a marker owed by an interrupted recovery", format: SeqKV, build: func(im *image, _ *os.File) string {
			im.st.SeqMark = 2 // 5 and 6 are the marker's
			im.seqRecord(0, seqLine(SeqKV, 0), nil)
			return ""
		}, want: []string{marker(5, 2), kv(7, 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, outPath := filepath.Join(dir, "ring"), filepath.Join(dir, "out")
			out, err := os.OpenFile(outPath, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
			require.NoError(t, err)
			defer out.Close()
			im := newImage(capacity)
			im.st = ringfile.State{SeqNext: 5, SeqFormat: uint8(c.format)}
			copy(im.st.SeqRun[:], deadRun)
			before := c.build(im, out)
			_, err = out.WriteString(before)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))

			b, log := openDurable(t, path, out, Config{Capacity: capacity, Sequence: SeqJSON})
			require.NotEqual(t, deadRun, b.RunID())
			require.NoError(t, b.Enqueue(withRoom(`{"after":1}`+"\n")))
			closeBus(t, b)
			assert.Equal(t, c.warns, len(log.ringErrors()) > 0, "%v", log.ringErrors())
			got, err := os.ReadFile(outPath)
			require.NoError(t, err)
			want := append(c.want, fmt.Sprintf(`1 %s {"after":1}`, b.RunID()))
			assert.Equal(t, want, seqFields(t, got))
		})
	}
}

// flight makes [head, end) the batch in flight, behind pre bytes of a
// marker for mark numbers, to the output out as it is now.
func (im *image) flight(out *os.File, end uint64, pre int, mark uint64) {
	p, err := ringfile.FilePosition(out)()
	if err != nil {
		panic(err)
	}
	im.st.End, im.st.Pre, im.st.SeqMark = end, uint64(pre), mark
	im.st.Size, im.st.Dev, im.st.Ino = p.Size, p.Dev, p.Ino
}

// seqFields returns each line of out as "seq run rest" (a JSON line's
// other keys as an object, a key=value line's rest); lines without a
// number as they are.
func seqFields(t *testing.T, out []byte) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if l == "" {
			continue
		}
		require.True(t, strings.HasSuffix(l, "\n"), "a line cut short: %q", l)
		l = strings.TrimSuffix(l, "\n")
		var n uint64
		var run, rest string
		switch {
		case strings.HasPrefix(l, `{"seq":`):
			k, err := fmt.Sscanf(l, `{"seq":%d,"run":"`, &n)
			require.Equal(t, 1, k, "%q: %v", l, err)
			_, tail, _ := strings.Cut(l, `"run":"`)
			run, rest = tail[:RunIDLen], "{"+tail[RunIDLen+2:]
		case strings.HasPrefix(l, "seq="):
			k, err := fmt.Sscanf(l, "seq=%d run=", &n)
			require.Equal(t, 1, k, "%q: %v", l, err)
			_, tail, _ := strings.Cut(l, " run=")
			run, rest = tail[:RunIDLen], tail[RunIDLen+1:]
		default:
			lines = append(lines, l)
			continue
		}
		lines = append(lines, fmt.Sprintf("%d %s %s", n, run, rest))
	}
	return lines
}

// TestRingFileVersion1IsReplayedAndUpgraded: a file of the previous format
// (no sequence slots) is replayed without numbers, then rewritten in this
// build's format, and the bus numbers its own records from 1.
func TestRingFileVersion1IsReplayedAndUpgraded(t *testing.T) {
	const capacity = 1024
	path := filepath.Join(t.TempDir(), "ring")
	im := newImage(capacity)
	im.version = ringfile.Version1 // no sequence slots
	im.record(0, line(1))
	require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))

	sink := &batchSink{}
	b, log := openDurable(t, path, sink, Config{Capacity: capacity, Sequence: SeqKV})
	require.NoError(t, b.Enqueue(withRoom("after\n")))
	closeBus(t, b)
	assert.Empty(t, log.ringErrors())
	assert.Equal(t, []string{string(line(1)), "seq=1 run=" + b.RunID() + " after\n"}, strs(sink.records()))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, uint32(ringfile.Version), binary.LittleEndian.Uint32(after[8:]))
	require.NoError(t, ringfile.Check(after, seqnum.Replay{}))
}
