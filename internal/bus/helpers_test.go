package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/asyncbus/asyncbus/internal/seqnum"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// batchSink is a BatchWriter that keeps a copy of every record it receives.
// With gate set, each call first waits until gate is closed (and signals
// entered once per call while waiting). fail, if set, decides per call whether
// to fail.
type batchSink struct {
	mu       sync.Mutex
	recs     [][]byte
	calls    int
	maxBatch int
	syncs    int
	gate     chan struct{}
	entered  chan struct{}
	fail     func(call int) error
	sleep    time.Duration
}

func (s *batchSink) WriteBatch(recs [][]byte) (int, error) {
	if s.gate != nil {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-s.gate
	}
	if s.sleep > 0 {
		time.Sleep(s.sleep) // a slow disk, not synchronisation
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.maxBatch = max(s.maxBatch, len(recs))
	if s.fail != nil {
		if err := s.fail(s.calls); err != nil {
			// Write a prefix, as a real short write would, and report it.
			k := len(recs) / 2
			for _, r := range recs[:k] {
				s.recs = append(s.recs, bytes.Clone(r))
			}
			return k, err
		}
	}
	for _, r := range recs {
		s.recs = append(s.recs, bytes.Clone(r))
	}
	return len(recs), nil
}

func (s *batchSink) Sync() error {
	s.mu.Lock()
	s.syncs++
	s.mu.Unlock()
	return nil
}

func (s *batchSink) records() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.recs...)
}

// Write makes batchSink an io.Writer; the bus only calls WriteBatch.
func (s *batchSink) Write(p []byte) (int, error) {
	_, err := s.WriteBatch([][]byte{p})
	return len(p), err
}

// streamSink is a plain io.Writer (the copy path); maxWrite > 0 makes it
// write at most that many bytes per call (short writes, err == nil).
type streamSink struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	calls    int
	maxWrite int
	failAt   map[int]bool
}

func (s *streamSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.failAt[s.calls] {
		return 0, errSink
	}
	if s.maxWrite > 0 && len(p) > s.maxWrite {
		p = p[:s.maxWrite]
	}
	return s.buf.Write(p)
}

func (s *streamSink) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

// checkSink verifies records on the fly: exactly once, per-producer order,
// none torn. It keeps no copies, so the stress test stays small in memory.
type checkSink struct {
	next    []int // next expected seq per producer
	scratch []byte
	err     error
	records int
	markers int
}

func (c *checkSink) WriteBatch(recs [][]byte) (int, error) {
	for _, r := range recs {
		if c.err != nil {
			break
		}
		if bytes.HasPrefix(r, []byte("asyncbus: dropped ")) {
			c.markers++
			continue
		}
		p, s, ok := fastParse(r)
		switch {
		case !ok || p >= len(c.next):
			c.err = errors.New("unparsable record " + strconv.Quote(string(r)))
		case s != c.next[p]:
			c.err = errors.New("producer " + strconv.Itoa(p) + ": got seq " + strconv.Itoa(s) + ", want " + strconv.Itoa(c.next[p]))
		default:
			c.scratch = rec(c.scratch, p, s, len(r))
			if !bytes.Equal(c.scratch, r) {
				c.err = errors.New("torn record " + strconv.Quote(string(r)))
			}
			c.next[p]++
			c.records++
		}
	}
	return len(recs), nil
}

// Write makes checkSink an io.Writer; the bus only calls WriteBatch.
func (c *checkSink) Write(p []byte) (int, error) {
	_, err := c.WriteBatch([][]byte{p})
	return len(p), err
}

func fastParse(r []byte) (p, s int, ok bool) {
	num := func(i int) (int, int, bool) {
		n, j := 0, i
		for j < len(r) && r[j] >= '0' && r[j] <= '9' {
			n = n*10 + int(r[j]-'0')
			j++
		}
		return n, j, j > i
	}
	if len(r) < 5 || r[0] != 'p' {
		return 0, 0, false
	}
	p, i, ok1 := num(1)
	if !ok1 || i+1 >= len(r) || r[i] != ' ' || r[i+1] != 's' {
		return 0, 0, false
	}
	s, _, ok2 := num(i + 2)
	return p, s, ok2
}

// switchSink fails every write while down is set.
type switchSink struct {
	down  atomic.Bool
	calls atomic.Int64
	syncs atomic.Int64
	mu    sync.Mutex
	recs  [][]byte
}

var errDown = errors.New("output down")

func (s *switchSink) WriteBatch(recs [][]byte) (int, error) {
	s.calls.Add(1)
	if s.down.Load() {
		return 0, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		s.recs = append(s.recs, append([]byte(nil), r...))
	}
	return len(recs), nil
}

func (s *switchSink) Write(p []byte) (int, error) {
	n, err := s.WriteBatch([][]byte{p})
	if n == 1 {
		return len(p), nil
	}
	return 0, err
}

func (s *switchSink) Sync() error {
	s.syncs.Add(1)
	return nil
}

func (s *switchSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// switchWriter is a plain io.Writer that fails while broken is set.
type switchWriter struct {
	broken atomic.Bool
	calls  atomic.Uint64
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (w *switchWriter) Write(p []byte) (int, error) {
	w.calls.Add(1)
	if w.broken.Load() {
		return 0, errSink
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *switchWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// hungWriter is a plain io.Writer whose calls wait until gate is closed,
// signalling entered (buffered) when a call starts.
type hungWriter struct {
	gate    chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func newHungWriter() *hungWriter {
	return &hungWriter{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
}

func (w *hungWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

var errSink = errors.New("sink broken")

// rec builds a self-checking record: "p<producer> s<seq> " + filler + "\n",
// exactly size bytes when size is large enough, filler derived from (p, s).
func rec(dst []byte, p, s, size int) []byte {
	dst = append(dst[:0], 'p')
	dst = strconv.AppendInt(dst, int64(p), 10)
	dst = append(dst, " s"...)
	dst = strconv.AppendInt(dst, int64(s), 10)
	dst = append(dst, ' ')
	for i := len(dst); i < size-1; i++ {
		dst = append(dst, byte('a'+(p*7+s*13+i)%26))
	}
	return append(dst, '\n')
}

// parseRec checks a record built by rec and returns its producer and seq.
func parseRec(r []byte) (p, s int, err error) {
	if _, err := fmt.Sscanf(string(r), "p%d s%d ", &p, &s); err != nil {
		return 0, 0, fmt.Errorf("unparsable record %q: %w", r, err)
	}
	if want := rec(nil, p, s, len(r)); !bytes.Equal(want, r) {
		return 0, 0, fmt.Errorf("torn record %q, want %q", r, want)
	}
	return p, s, nil
}

// splitLines splits a stream at '\n', keeping the newline.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// payload returns a record of exactly size bytes ending in '\n' (size >= 1).
func payload(i, size int) []byte {
	p := make([]byte, size)
	for j := range p {
		p[j] = byte('A' + (i+j)%26)
	}
	p[size-1] = '\n'
	return p
}

type sinkCase struct {
	name string
	make func(t *testing.T) (io.Writer, func() [][]byte)
}

func sinkCases() []sinkCase {
	return []sinkCase{
		{"batch", func(*testing.T) (io.Writer, func() [][]byte) {
			s := &batchSink{}
			return s, func() [][]byte {
				var out [][]byte
				for _, r := range s.records() {
					if len(r) > 0 {
						out = append(out, r)
					}
				}
				return out
			}
		}},
		{"stream", func(*testing.T) (io.Writer, func() [][]byte) {
			s := &streamSink{}
			return s, func() [][]byte { return splitLines(s.bytes()) }
		}},
		{"file", func(t *testing.T) (io.Writer, func() [][]byte) {
			f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			return f, func() [][]byte {
				data, err := os.ReadFile(f.Name())
				require.NoError(t, err)
				return splitLines(data)
			}
		}},
	}
}

func newTestBus(t testing.TB, w interface{ Write([]byte) (int, error) }, cfg Config, adjust func(*Bus)) *Bus {
	t.Helper()
	b, err := newBus(w, withMarker(cfg), adjust)
	require.NoError(t, err)
	return b
}

// patient makes a bus whose output never counts as stuck: for tests of
// waits behind a sink the test holds, not of the stuck rule.
func patient(b *Bus) { b.stuckAfter = int64(time.Hour) }

// fastRetry makes sink-error tests quick.
func fastRetry(b *Bus) {
	b.retryBase = 10 * time.Microsecond
	b.retryMax = 100 * time.Microsecond
}

// waitFor polls cond, yielding, until it holds (no sleeps, no timing).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 50_000_000 {
			t.Fatalf("condition never held: %s", what)
		}
		runtime.Gosched()
	}
}

func closeBus(t testing.TB, b *Bus) {
	t.Helper()
	require.NoError(t, b.Close(context.Background()))
}

// closeBusFailed closes b, some of whose records failed: Close reports
// every failure of the bus's life, those an earlier Flush reported
// included, with their total count.
func closeBusFailed(t testing.TB, b *Bus, sinkErr error) {
	t.Helper()
	err := b.Close(context.Background())
	var se *OutputError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, sinkErr)
	require.NotZero(t, se.Failed)
	require.Equal(t, b.Stats().Failed, se.Failed, "Close counts every failed record")
}

func requireAccounting(t testing.TB, st Stats) {
	t.Helper()
	require.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed, "accounting: %+v", st)
	require.Zero(t, st.QueueDepth, "ring not empty: %+v", st)
}

// testDropMarker is the drop marker of these tests (the root package
// supplies the real one): "asyncbus: dropped N records\n".
func testDropMarker(dst []byte, dropped uint64) []byte {
	dst = append(dst, "asyncbus: dropped "...)
	dst = strconv.AppendUint(dst, dropped, 10)
	return append(dst, " records\n"...)
}

// withMarker sets testDropMarker unless cfg has a marker.
func withMarker(cfg Config) Config {
	if cfg.DropMarker == nil {
		cfg.DropMarker = testDropMarker
	}
	return cfg
}

// testNew is New with withMarker applied.
func testNew(w io.Writer, cfg Config) (*Bus, error) {
	return New(w, withMarker(cfg))
}

// pacedWriter is a deterministic slow output: each call takes at most
// chunk bytes and lasts pause (an output that accepts chunk/pause bytes a
// second, as a pipe behind a slow reader does); a test may change pause
// while it is written to (an output that slows down). written counts the
// bytes it took, for tests that measure a caller's wait in bytes of output.
type pacedWriter struct {
	chunk   int
	pause   atomic.Int64 // ns each call lasts; atomic: a test changes it while the drainer writes
	written atomic.Uint64
	mu      sync.Mutex
	buf     bytes.Buffer
}

// newPacedWriter returns a pacedWriter taking chunk bytes per call of pause.
func newPacedWriter(chunk int, pause time.Duration) *pacedWriter {
	w := &pacedWriter{chunk: chunk}
	w.pause.Store(int64(pause))
	return w
}

func (w *pacedWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(w.pause.Load())) // the output's own pace, not a synchronisation
	n := min(len(p), w.chunk)
	w.mu.Lock()
	w.buf.Write(p[:n])
	w.mu.Unlock()
	w.written.Add(uint64(n))
	return n, nil
}

func (w *pacedWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// blockedWaits runs producers Block producers against b, whose output is
// w, each enqueueing size-byte records until w has taken until bytes, and
// returns the largest wait of any call that began once counted() held
// (nil: every call), in bytes that w took during it, and how many records
// each producer got in. The output is slow (tens of bytes per
// millisecond), so that a producer descheduled around its call on a
// loaded machine adds little to its measured wait.
func blockedWaits(t *testing.T, b *Bus, w *pacedWriter, producers, size int, until uint64, counted func() bool) (maxWait uint64, counts []int) {
	t.Helper()
	counts = make([]int, producers)
	waits := make([]uint64, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var buf []byte
			for s := 0; w.written.Load() < until; s++ {
				buf = rec(buf, p, s, size)
				measure := counted == nil || counted()
				before := w.written.Load()
				if !assert.NoError(t, b.Enqueue(buf)) {
					return
				}
				if measure {
					waits[p] = max(waits[p], w.written.Load()-before)
				}
				counts[p]++
			}
		})
	}
	wg.Wait()
	for _, wt := range waits {
		maxWait = max(maxWait, wt)
	}
	return maxWait, counts
}

// Short names for the numbering the tests use (package seqnum's).
const (
	SeqOff         = seqnum.Off
	SeqJSON        = seqnum.JSON
	SeqKV          = seqnum.KV
	SeqEncoded     = seqnum.Encoded
	SeqRoom        = seqnum.Room
	RunIDLen       = seqnum.RunIDLen
	RunEndSentinel = seqnum.RunEndSentinel
	RunEndRoom     = seqnum.RunEndRoom
)

// SeqEncode and SeqFormat are seqnum's; RingFileError and OutputPosition
// ringfile's.
type (
	SeqEncode      = seqnum.Encode
	SeqFormat      = seqnum.Format
	RingFileError  = ringfile.Error
	OutputPosition = ringfile.Position
)
