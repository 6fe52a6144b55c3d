package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// tearWriter is a plain io.Writer (the copy path) that fails part-way
// through a record: call tearAt writes only cut bytes and fails, the next
// down calls fail without writing, and then it works again; with hold set,
// it keeps failing until hold is cleared.
type tearWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	calls  int
	tearAt int
	cut    int
	down   int
	hold   atomic.Bool
}

func (w *tearWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	switch {
	case w.calls == w.tearAt:
		n, _ := w.buf.Write(p[:min(w.cut, len(p))])
		return n, errSink
	case w.calls > w.tearAt && (w.calls <= w.tearAt+w.down || w.hold.Load()):
		return 0, errSink
	}
	return w.buf.Write(p)
}

func (w *tearWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// TestTornRecordIsEndedByNewline (issue 13 item 6): a writer that fails
// part-way through a record for longer than the batch's retry budget, then
// recovers. The fragment is ended with a newline before the next record, so
// no record is glued to it; the torn record counts as failed, the glued one
// would have counted as written.
func TestTornRecordIsEndedByNewline(t *testing.T) {
	w := &tearWriter{tearAt: 1, cut: 10}
	w.hold.Store(true)
	b := newTestBus(t, w, Config{Capacity: 4096}, fastRetry)
	for i := range 3 {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, 40)))
	}
	err := b.Flush(context.Background())
	require.ErrorIs(t, err, errSink)
	require.EqualValues(t, 3, b.Stats().Failed, "the torn record and the two after it")

	// The writer recovers: log until a record is written (Flush probes).
	w.hold.Store(false)
	first := 3
	for ; ; first++ {
		require.NoError(t, b.Enqueue(rec(nil, 0, first, 40)))
		if b.Flush(context.Background()) == nil {
			break
		}
		require.Less(t, first, 1000, "never recovered")
	}
	for i := first + 1; i < first+5; i++ {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, 40)))
	}
	closeBus(t, b)
	st := b.Stats()
	requireAccounting(t, st)

	lines := splitLines(w.bytes())
	require.NotEmpty(t, lines)
	require.Equal(t, string(rec(nil, 0, 0, 40)[:10])+"\n", string(lines[0]), "the fragment, ended by a newline")
	var written []int
	for _, l := range lines[1:] {
		_, s, err := parseRec(l)
		require.NoError(t, err, "no record glued to the fragment")
		written = append(written, s)
	}
	require.EqualValues(t, len(written), st.Written)
	require.Equal(t, []int{first, first + 1, first + 2, first + 3, first + 4}, written)
}

// TestCutBack: the fragment is removed only from a regular file whose end
// is still our fragment's end.
func TestCutBack(t *testing.T) {
	dir := t.TempDir()
	t.Run("regular file", func(t *testing.T) {
		f, err := os.Create(filepath.Join(dir, "plain"))
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("whole\nfrag")
		require.NoError(t, err)
		require.NoError(t, cutBack(f, 4))
		_, err = f.WriteString("next\n")
		require.NoError(t, err)
		got, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		require.Equal(t, "whole\nnext\n", string(got), "offset moved back too: no hole")
	})
	t.Run("another writer appended after the fragment", func(t *testing.T) {
		path := filepath.Join(dir, "shared")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString("whole\nfrag")
		require.NoError(t, err)
		other, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = other.WriteString("theirs\n")
		require.NoError(t, err)
		require.NoError(t, other.Close())
		require.ErrorIs(t, cutBack(f, 4), errNotCut)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "whole\nfragtheirs\n", string(got), "their bytes are not cut")
	})
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		defer r.Close()
		defer w.Close()
		require.ErrorIs(t, cutBack(w, 1), errNotCut)
	})
	t.Run("not a file", func(t *testing.T) {
		require.ErrorIs(t, cutBack(&bytes.Buffer{}, 1), errNotCut)
	})
}

const fsizeChildEnv = "ASYNCBUS_FSIZE_CHILD"

// childResult is what the file-size-limit child reports.
type childResult struct {
	Stats
	FastFails uint64
}

// TestTornFileIsCutBack (issue 13 item 6): a real *os.File whose writes
// start failing part-way through a record (RLIMIT_FSIZE in a child process,
// SIGXFSZ ignored, so writes past the limit are short and then EFBIG, as
// with a full disk). The file must hold whole records only, and exactly the
// records counted as written.
func TestTornFileIsCutBack(t *testing.T) {
	const limit, size, count = 10_000, 97, 300 // the limit falls inside record 103
	cases := []struct {
		name   string
		append bool
		writev bool
	}{
		{"append writev", true, true},
		{"no append writev", false, true},
		{"append copy", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.log")
			cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimitChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%t|%t|%d|%d|%d", fsizeChildEnv, path, tc.append, tc.writev, limit, size, count))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child: %s", out)
			var res childResult
			i := bytes.Index(out, []byte("RESULT "))
			require.GreaterOrEqual(t, i, 0, "child: %s", out)
			line, _, _ := bytes.Cut(out[i+len("RESULT "):], []byte("\n"))
			require.NoError(t, json.Unmarshal(line, &res))

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.LessOrEqual(t, len(data), limit)
			lines := splitLines(data)
			for i, l := range lines {
				_, s, err := parseRec(l)
				require.NoError(t, err, "line %d: no torn line", i)
				require.Equal(t, i, s, "in order, once")
			}
			require.EqualValues(t, len(lines), res.Written, "written == whole lines in the file")
			require.EqualValues(t, len(lines)*size, res.WrittenBytes)
			require.EqualValues(t, count, res.Written+res.Failed)
			require.EqualValues(t, count, res.Enqueued)
			require.Equal(t, limit/size, len(lines), "every record that fits is there")
		})
	}
}

// TestFileSizeLimitChild is the child of TestTornFileIsCutBack; it does
// nothing unless started by it.
func TestFileSizeLimitChild(t *testing.T) {
	arg := os.Getenv(fsizeChildEnv)
	if arg == "" {
		return // not the child
	}
	var path string
	var appendMode, writev bool
	var limit, size, count int
	parts := strings.Split(arg, "|")
	require.Len(t, parts, 6)
	path = parts[0]
	_, err := fmt.Sscanf(strings.Join(parts[1:], " "), "%t %t %d %d %d", &appendMode, &writev, &limit, &size, &count)
	require.NoError(t, err)

	signal.Ignore(syscall.SIGXFSZ) // writes past the limit fail with EFBIG instead of killing us
	// Only the soft limit: it is raised back when the test ends, so that
	// the test binary can still write its coverage data under -cover.
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &old))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(limit), Max: old.Max}))
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_FSIZE, &old) })
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendMode {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	require.NoError(t, err)
	defer f.Close()
	useWritev = writev
	writevRegular = writev // this child exercises writev on a regular file
	b := newTestBus(t, f, Config{Capacity: 64 << 10}, fastRetry)
	want := sinkCopy
	if writev {
		want = sinkWritev
	}
	require.Equal(t, want, b.sink)
	for i := range count {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, size)))
	}
	err = b.Close(context.Background())
	require.ErrorIs(t, err, syscall.EFBIG)
	res, err := json.Marshal(childResult{Stats: b.Stats(), FastFails: b.d.fastFails})
	require.NoError(t, err)
	fmt.Printf("RESULT %s\n", res)
}

// TestFailingOutputDoesNotStallBlock (issue 13 item 7): with an output that
// always fails, a 64 KiB ring and Block mode, callers logging a fixed number
// of records all return, the records are counted as failed, Close finishes
// the drain (it does not give up at its deadline), and once the output
// works again new records are written. The deadlines are hang guards only:
// before the fix, each batch waited out the back-off (about 3 s per batch
// once it had grown), and these callers needed minutes.
func TestFailingOutputDoesNotStallBlock(t *testing.T) {
	const callers, perCaller, size = 8, 4000, 100
	w := &switchWriter{}
	w.broken.Store(true)
	var reports atomic.Int64
	b := newTestBus(t, w, Config{Capacity: 64 << 10, Overflow: Block, OnError: func(error) { reports.Add(1) }}, nil)
	guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	var refused atomic.Int64
	for p := range callers {
		wg.Go(func() {
			var buf []byte
			for s := range perCaller {
				buf = rec(buf, p, s, size)
				if b.Enqueue(buf) != nil {
					refused.Add(1)
				}
			}
		})
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-guard.Done():
		t.Fatalf("Block callers stalled behind a failing output: %+v", b.Stats())
	}
	require.Zero(t, refused.Load(), "Block accepts every record")
	err := b.Flush(guard)
	require.ErrorIs(t, err, errSink, "Flush answers with the output's failure, before the guard")
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, callers*perCaller, st.Failed)
	require.Zero(t, st.Written)

	// The output recovers: a probe finds it working, and from then on
	// every record is written.
	w.broken.Store(false)
	extra := 0
	for {
		require.NoError(t, b.Enqueue(rec(nil, 99, extra, size)))
		extra++
		if err := b.Flush(guard); err == nil {
			break
		}
		require.NoError(t, guard.Err(), "the output recovered but nothing was written")
	}
	before := b.Stats().Written
	require.EqualValues(t, 1, before, "the record whose Flush succeeded")
	for i := range 100 {
		require.NoError(t, b.Enqueue(rec(nil, 99, extra+i, size)))
	}
	require.NoError(t, b.Flush(guard))
	require.NoError(t, b.Close(guard), "Close drains before its deadline; nothing failed since the last Flush")
	st = b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, before+100, st.Written)
	require.EqualValues(t, callers*perCaller+extra-1, st.Failed)
	require.NotZero(t, b.d.fastFails, "failed batches without calling the output")
	require.Less(t, w.calls.Load(), uint64(callers*perCaller), "the failing output was probed, not called per record")
	require.NotZero(t, reports.Load())
	lines := splitLines(w.bytes())
	require.Len(t, lines, 101)
	for i, l := range lines {
		p, s, err := parseRec(l)
		require.NoError(t, err)
		require.Equal(t, 99, p)
		require.Equal(t, extra-1+i, s)
	}
}

// gateWriter is a plain io.Writer whose writes wait until gate is closed: an
// output that hangs.
type gateWriter struct {
	gate chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestHungOutputBlocks (issue 13 item 7): a Write that does not return is
// not a failure: Block callers wait for space (back-pressure), and once the
// output moves on, every record arrives exactly once, in per-caller order.
func TestHungOutputBlocks(t *testing.T) {
	const callers, perCaller, size = 4, 200, 50
	w := &gateWriter{gate: make(chan struct{})}
	b := newTestBus(t, w, Config{Capacity: 4096, Overflow: Block}, nil)
	var wg sync.WaitGroup
	var done atomic.Int64
	for p := range callers {
		wg.Go(func() {
			var buf []byte
			for s := range perCaller {
				buf = rec(buf, p, s, size)
				require.NoError(t, b.Enqueue(buf))
			}
			done.Add(1)
		})
	}
	waitFor(t, "callers blocked on the full ring", func() bool { return b.waiters.Load() > 0 })
	require.Less(t, done.Load(), int64(callers), "not every caller got through")
	require.Zero(t, b.Stats().Failed)
	close(w.gate)
	wg.Wait()
	closeBus(t, b)
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, callers*perCaller, st.Written)
	next := make([]int, callers)
	for _, l := range splitLines(w.buf.Bytes()) {
		p, s, err := parseRec(l)
		require.NoError(t, err)
		require.Equal(t, next[p], s)
		next[p]++
	}
	for p := range callers {
		require.Equal(t, perCaller, next[p])
	}
}

// TestOnErrorMayUseTheBus (issue 13 item 9): OnError runs off the drainer,
// so a callback that enqueues into a full Block ring, flushes or closes the
// same bus does not deadlock, and its reports are delivered.
func TestOnErrorMayUseTheBus(t *testing.T) {
	cases := []struct {
		name string
		use  func(b *Bus)
	}{
		{"enqueue into a full ring", func(b *Bus) {
			for i := range 100 {
				_ = b.Enqueue(rec(nil, 1, i, 100)) // 100 x 100 bytes: far more than the 1 KiB ring
			}
		}},
		{"flush", func(b *Bus) { _ = b.Flush(context.Background()) }},
		{"close", func(b *Bus) { _ = b.Close(context.Background()) }},
		// Deeper than inCallback's first 256-frame look at the stack.
		{"close 300 frames deep", func(b *Bus) { atDepth(300, func() { _ = b.Close(context.Background()) }) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &switchWriter{}
			w.broken.Store(true)
			var bus atomic.Pointer[Bus]
			var mu sync.Mutex
			var reports []error
			cfg := Config{Capacity: 1024, Overflow: Block, OnError: func(err error) {
				mu.Lock()
				reports = append(reports, err)
				mu.Unlock()
				tc.use(bus.Load())
			}}
			b := newTestBus(t, w, cfg, func(b *Bus) {
				fastRetry(b)
				bus.Store(b)
			})
			guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			closed := make(chan error, 1)
			go func() {
				for i := range 20 {
					_ = b.Enqueue(rec(nil, 0, i, 40))
				}
				// A Flush before Close: Close would also end a
				// callback's wait for ring space (Enqueue returns
				// ErrClosed), Flush needs the drainer itself.
				if err := b.Flush(guard); errors.Is(err, context.DeadlineExceeded) {
					closed <- err
					return
				}
				closed <- b.Close(guard)
			}()
			var err error
			select {
			case err = <-closed:
			case <-guard.Done():
				t.Fatalf("deadlock: logging and Close did not return: %+v", b.Stats())
			}
			require.NotErrorIs(t, err, context.DeadlineExceeded, "Close deadlocked")
			if err != nil { // nil when the Flush answered every failure
				require.ErrorIs(t, err, errSink)
			}
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, reports)
			require.ErrorIs(t, reports[0], errSink)
			requireAccounting(t, b.Stats())
		})
	}
}

// atDepth calls f with at least depth more frames on the stack.
//
//go:noinline
func atDepth(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	atDepth(depth-1, f)
}

// TestReportQueueOverflowIsCounted: reports that find the queue full are
// not lost silently: their number is delivered as one report.
func TestReportQueueOverflowIsCounted(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	cfg := Config{Capacity: 1024, OnError: func(err error) {
		<-release
		mu.Lock()
		got = append(got, err.Error())
		mu.Unlock()
	}}
	b := newTestBus(t, &switchWriter{}, cfg, nil)
	// The drainer has nothing to report (its output works): send from here
	// as it would. One report is being delivered, 64 wait, the rest are
	// counted.
	const n = 100
	for i := range n {
		b.rep.send(fmt.Errorf("report %d", i))
	}
	close(release)
	closeBus(t, b)
	mu.Lock()
	defer mu.Unlock()
	lost, delivered := 0, 0
	for _, s := range got {
		var k int
		if _, err := fmt.Sscanf(s, "asyncbus: %d error reports lost", &k); err == nil {
			lost += k
			continue
		}
		delivered++
	}
	require.Positive(t, lost)
	require.Equal(t, n, delivered+lost, "every report delivered or counted: %q", got)
}
