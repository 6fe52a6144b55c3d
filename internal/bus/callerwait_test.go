package bus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitSafeBus is a bus as the root's default handler makes it: write-through
// and the quiet wait on, the output's kind deciding where a caller may write.
func exitSafeBus(t testing.TB, w io.Writer, cfg Config) *Bus {
	t.Helper()
	cfg.WriteThrough = true
	b, err := newBus(w, withMarker(cfg), nil)
	require.NoError(t, err)
	return b
}

func TestBreakerTransitions(t *testing.T) {
	b := &callerGate{slowCall: int64(SlowCall), verySlowCall: int64(VerySlowCall), inFlightSlow: int64(VerySlowCall)}
	fast, slow := int64(10*time.Microsecond), int64(2*SlowCall)
	verySlow, hung := int64(2*VerySlowCall), int64(2*ErrorWaitMax)
	word := func(speed, streak uint32) uint32 { return speed | streak<<speedStreakShift }
	for _, tc := range []struct {
		name string
		from uint32
		took int64
		want uint32
	}{
		{"fast stays fast", word(speedFast, 0), fast, word(speedFast, 0)},
		{"one slow call: still fast (a scheduling hiccup)", word(speedFast, 0), slow, word(speedFast, 1)},
		{"three slow calls: still fast", word(speedFast, 2), slow, word(speedFast, 3)},
		{"four slow calls in a row: slow", word(speedFast, 3), slow, word(speedSlow, 4)},
		{"more slow calls stay slow", word(speedSlow, 9), slow, word(speedSlow, 10)},
		{"one very slow call: slow at once", word(speedFast, 0), verySlow, word(speedSlow, 1)},
		{"a fast call resets", word(speedSlow, 9), fast, word(speedFast, 0)},
		{"a fast call resets a streak", word(speedFast, 2), fast, word(speedFast, 0)},
		{"a call past ErrorWaitMax: stuck", word(speedFast, 0), hung, word(speedStuck, 1)},
		{"stuck, then a slow answer: the streak goes on", word(speedStuck, 1), slow, word(speedFast, 2)},
		{"stuck, then a fast answer: fast", word(speedStuck, 1), fast, word(speedFast, 0)},
		{"the streak saturates", word(speedSlow, 255), slow, word(speedSlow, 255)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, b.nextSpeed(tc.from, tc.took))
		})
	}
	assert.Equal(t, uint32(speedFast), b.inFlightSpeed(fast))
	assert.Equal(t, uint32(speedFast), b.inFlightSpeed(slow), "in flight past SlowCall only: not yet slow")
	assert.Equal(t, uint32(speedSlow), b.inFlightSpeed(verySlow), "in flight past VerySlowCall: slow")
	assert.Equal(t, uint32(speedStuck), b.inFlightSpeed(hung))
}

// pathWriter stands for filesink.File: a writer with a Path method.
type pathWriter struct{ bytes.Buffer }

func (*pathWriter) Path() string { return "/var/log/app.log" }

func TestDirectWriterByOutputKind(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	defer f.Close()
	r, pw, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer pw.Close()
	for _, tc := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"io.Discard", io.Discard, true},
		{"regular file", f, true},
		{"file sink (Path)", &pathWriter{}, true},
		{"in-memory writer of unknown kind", &bytes.Buffer{}, false},
		{"hung writer", newHungWriter(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := directWriter(tc.w)
			if !tc.want {
				assert.Nil(t, check, "never written by a caller")
				return
			}
			require.NotNil(t, check)
			assert.True(t, check(100))
		})
	}
	t.Run("pipe", func(t *testing.T) {
		check := directWriter(pw)
		if runtime.GOOS != "linux" {
			assert.Nil(t, check, "only Linux tells a pipe's room")
			return
		}
		require.NotNil(t, check)
		assert.True(t, check(100), "an empty pipe has room")
		// Fill the pipe: its reader takes nothing.
		full := make([]byte, 4096)
		for check(len(full)) {
			_, err := pw.Write(full)
			require.NoError(t, err)
		}
		assert.False(t, check(len(full)), "a full pipe has no room: the record goes through the ring")
	})
}

// The hung output: every Enqueue returns (the first within the quiet
// wait's bound, the others at once), and five EnqueueWritten calls (Error
// records) return within 3 s in all. The figures are in the benchmarks
// (BenchmarkCallerLatency at the root); these bounds only catch a hang.
func TestHungOutputNeverHoldsCallers(t *testing.T) {
	w := newHungWriter()
	b := exitSafeBus(t, w, Config{})
	var slowest time.Duration
	for i := range 50 {
		start := time.Now()
		require.NoError(t, b.Enqueue(payload(i, 100)))
		slowest = max(slowest, time.Since(start))
	}
	assert.Less(t, slowest, time.Second, "no Enqueue waits for a hung output")
	start := time.Now()
	for i := range 5 {
		require.NoError(t, b.EnqueueWritten(payload(50+i, 100)))
	}
	errorWaits := time.Since(start)
	assert.Less(t, errorWaits, 3*time.Second, "five Error records on a hung output")
	t.Logf("slowest Enqueue %v, five EnqueueWritten %v", slowest, errorWaits)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Close(ctx), context.DeadlineExceeded)
	st := b.Stats()
	assert.EqualValues(t, 55, st.Written+st.Dropped+st.Failed, "every record counted once Close gave up")
	assert.EqualValues(t, 55, st.Enqueued)
	close(w.gate)
	<-b.done
}

// A writer that logs through the bus it serves, from Write or Sync, on the
// drainer or on a write-through: nothing deadlocks, every record is written
// or counted.
type reentrantWriter struct {
	b       atomic.Pointer[Bus]
	written bool // Error-like records (EnqueueWritten) rather than Enqueue
	inner   atomic.Int32
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *reentrantWriter) log() {
	if b := w.b.Load(); b != nil && w.inner.Add(1) <= 200 {
		rec := []byte("inner\n")
		if w.written {
			_ = b.EnqueueWritten(rec)
		} else {
			_ = b.Enqueue(rec)
		}
	}
}

func (w *reentrantWriter) Write(p []byte) (int, error) {
	if !bytes.Equal(p, []byte("inner\n")) {
		w.log()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *reentrantWriter) Sync() error {
	w.log()
	return nil
}

func TestReentrantWriterNeverDeadlocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		written bool
		direct  bool
	}{
		{"Enqueue from the drainer's call", false, false},
		{"EnqueueWritten from the drainer's call", true, false},
		{"Enqueue from a write-through", false, true},
		{"EnqueueWritten from a write-through", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &reentrantWriter{written: tc.written}
			cfg := Config{Capacity: 4096, wtInterval: -1}
			if tc.direct {
				cfg.direct = always
			}
			b := exitSafeBus(t, w, cfg)
			w.b.Store(b)
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				for i := range 100 {
					_ = b.EnqueueWritten(payload(i, 200))
					_ = b.Enqueue(payload(i, 200))
				}
				_ = b.Flush(context.Background())
				_ = b.Close(context.Background())
			}()
			select {
			case <-finished:
			case <-time.After(30 * time.Second): // a failure bound, not synchronisation
				t.Fatal("deadlock: a writer logging through its own bus")
			}
			st := b.Stats()
			requireAccounting(t, st)
			assert.EqualValues(t, 200+min(w.inner.Load(), 200), st.Enqueued, "every record counted")
		})
	}
}

// A writer that takes part of every call and returns an error (a net.Conn
// with a write deadline) makes progress: its records are finished, never
// torn, and none counts as failed.
type trickleWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *trickleWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := max(1, len(p)/3)
	w.buf.Write(p[:n])
	if n < len(p) {
		return n, os.ErrDeadlineExceeded
	}
	return n, nil
}

func TestPartialWritesThatProgressAreFinished(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "drainer", true: "write-through"}[direct], func(t *testing.T) {
			w := &trickleWriter{}
			cfg := Config{}
			if direct {
				cfg.direct, cfg.wtInterval, cfg.slowCall = always, -1, time.Hour
			}
			b := exitSafeBus(t, w, cfg)
			for i := range 50 {
				require.NoError(t, b.Enqueue(payload(i, 120)))
			}
			closeBus(t, b)
			st := b.Stats()
			requireAccounting(t, st)
			assert.Zero(t, st.Failed)
			got := splitLines(w.buf.Bytes())
			require.Len(t, got, 50)
			for i, r := range got {
				assert.Equal(t, payload(i, 120), r, "record %d whole and in order", i)
			}
		})
	}
}

// Several goroutines logging a few records at the same moment find each
// other's records queued ahead of theirs: each record is nonetheless in the
// output when its Enqueue returns (written through, or waited for), so a
// program that returns right after loses nothing. MaxLatency is long so
// that no wait ends at its bound on a loaded machine.
func TestQuietWaitConcurrentBurst(t *testing.T) {
	for _, sc := range sinkCases() {
		t.Run(sc.name, func(t *testing.T) {
			w, lines := sc.make(t)
			b := newTestBus(t, w, Config{WriteThrough: true, MaxLatency: time.Hour}, nil)
			const goroutines, per = 8, 5
			var wg sync.WaitGroup
			errs := make(chan error, goroutines*per)
			for g := range goroutines {
				wg.Go(func() {
					for i := range per {
						p := []byte(fmt.Sprintf("g%d i%d\n", g, i))
						if err := b.Enqueue(p); err != nil {
							errs <- err
							return
						}
						// Enqueue returned: p must be in the output now.
						found := false
						for _, l := range lines() {
							found = found || bytes.Equal(l, p)
						}
						if !found {
							errs <- fmt.Errorf("%q not in the output when Enqueue returned", p)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			st := b.Stats()
			assert.EqualValues(t, goroutines*per, st.Written, "every record written before Close: %+v", st)
			assert.Zero(t, st.QueueDepth)
			closeBus(t, b)
			requireAccounting(t, b.Stats())
			got := lines()
			require.Len(t, got, goroutines*per, "Close writes nothing twice")
			next := make([]int, goroutines)
			for _, l := range got {
				var g, i int
				_, err := fmt.Sscanf(string(l), "g%d i%d\n", &g, &i)
				require.NoError(t, err)
				require.Equal(t, next[g], i, "goroutine %d's records in order", g)
				next[g]++
			}
		})
	}
}

// The quiet wait's rate limit: once it is spent, a record that finds a
// short queue ahead of it is only queued, even while the output is stuck.
func TestQuietWaitRateLimit(t *testing.T) {
	s := &batchSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBus(t, s, Config{WriteThrough: true, MaxLatency: time.Hour, qwBurst: 1, qwInterval: time.Hour}, nil)
	first := make(chan error, 1)
	go func() { first <- b.Enqueue(payload(0, 30)) }()
	<-s.entered // record 0 is being written through, stuck in the sink
	waited := make(chan error, 1)
	go func() { waited <- b.Enqueue(payload(1, 30)) }()
	// Record 1 finds record 0 ahead of it and spends the one token.
	waitFor(t, "record 1 takes the quiet wait's token", func() bool { return b.qwLimit.tat.Load() != 0 })
	third := make(chan error, 1)
	go func() { third <- b.Enqueue(payload(2, 30)) }()
	select {
	case err := <-third:
		require.NoError(t, err)
	case <-time.After(10 * time.Second): // a failure detector: the call should not block at all
		t.Fatal("record 2 waited although the quiet wait's limit was spent")
	}
	select {
	case err := <-waited:
		t.Fatalf("record 1 stopped waiting (%v) while the output was stuck", err)
	default:
	}
	close(s.gate)
	require.NoError(t, <-first)
	require.NoError(t, <-waited)
	recs := s.records()
	require.GreaterOrEqual(t, len(recs), 2, "record 1 is in the output when its Enqueue returns")
	closeBus(t, b)
	recs = s.records()
	require.Len(t, recs, 3)
	for i, r := range recs {
		assert.Equal(t, payload(i, 30), r, "record %d in order", i)
	}
	requireAccounting(t, b.Stats())
}

// A writer that logs through the bus it serves, from inside its Write (a
// network writer reporting a reconnect through slog.Default, say): the
// inner record finds the outer one ahead of it, but its quiet wait cannot
// be answered while the outer Write runs. It ends at MaxLatency, the record
// stays queued, and nothing deadlocks or is lost.
func TestQuietWaitFromInsideWrite(t *testing.T) {
	for _, writeThrough := range []bool{true, false} {
		t.Run(fmt.Sprintf("outer written through %v", writeThrough), func(t *testing.T) {
			var b *Bus
			s := &reentrantSink{}
			s.enqueue = func() error { return b.Enqueue([]byte("inner\n")) }
			b = newTestBus(t, s, Config{WriteThrough: true, MaxLatency: 20 * time.Millisecond}, nil)
			if !writeThrough {
				// The outer record goes to the drainer: spend the
				// write-through limit first with records that do not reenter.
				b.wtLimit.interval, b.wtLimit.tolerance = int64(time.Hour), 0
				require.NoError(t, b.Enqueue([]byte("spend\n")))
			}
			require.NoError(t, b.Enqueue([]byte("outer\n")))
			require.NoError(t, b.Flush(context.Background()))
			require.NoError(t, <-s.innerErr)
			closeBus(t, b)
			got := string(s.bytes())
			assert.Contains(t, got, "outer\ninner\n")
			requireAccounting(t, b.Stats())
		})
	}
}

// reentrantSink is a plain writer whose Write, on its first "outer" record,
// calls enqueue (which enqueues on the bus that is writing to it) and
// reports the result on innerErr.
type reentrantSink struct {
	streamSink
	once     sync.Once
	enqueue  func() error
	innerErr chan error
}

func (s *reentrantSink) Write(p []byte) (int, error) {
	s.once.Do(func() { s.innerErr = make(chan error, 1) })
	n, err := s.streamSink.Write(p)
	if bytes.Equal(p, []byte("outer\n")) {
		s.innerErr <- s.enqueue()
	}
	return n, err
}

// A file or pipe is slow only when it is sick: one slow call (a write
// descheduled on a loaded machine) trips nothing, four in a row do, and a
// call in flight trips the breaker only past StuckDirectCall.
func TestBreakerForFilesAndPipes(t *testing.T) {
	b := &callerGate{slowCall: int64(SlowDirectCall), verySlowCall: math.MaxInt64, inFlightSlow: int64(StuckDirectCall)}
	slow := int64(2 * SlowDirectCall)
	s := uint32(speedFast)
	for i := range SlowCallsToTrip - 1 {
		s = b.nextSpeed(s, slow)
		assert.Equal(t, uint32(speedFast), s&0xff, "slow call %d: maybe the CPU, not the file", i+1)
	}
	s = b.nextSpeed(s, slow)
	assert.Equal(t, uint32(speedSlow), s&0xff, "%d slow calls in a row", SlowCallsToTrip)
	assert.Equal(t, uint32(speedFast), b.inFlightSpeed(int64(StuckDirectCall/2)))
	assert.Equal(t, uint32(speedSlow), b.inFlightSpeed(int64(2*StuckDirectCall)), "a pipe whose reader stopped")
}

// A stdout pipe whose reader stopped: the drainer's write blocks for good,
// and no caller is held beyond the quiet wait's bound, nor once the write
// has been stuck for StuckDirectCall. The bound asserted only catches a
// hang; the figures are logged.
func TestStalledPipeNeverHoldsCallers(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	b := exitSafeBus(t, w, Config{})
	rec := bytes.Repeat([]byte("x"), 1023)
	var slowest time.Duration
	for range 400 { // 400 KiB: far more than the pipe holds
		start := time.Now()
		require.NoError(t, b.Enqueue(append(rec, '\n')))
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("slowest Enqueue %v", slowest)
	assert.Less(t, slowest, time.Second, "no caller waits for a stalled pipe")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Close(ctx), context.DeadlineExceeded)
	st := b.Stats()
	assert.EqualValues(t, 400, st.Written+st.Failed, "every record counted")
	require.NoError(t, w.Close()) // the drainer's write fails and it exits
	<-b.done
}

// An Error wait that could succeed when it began ends once the output's
// measured rate falls so far that the bytes still ahead of the record
// cannot be written in the time left, instead of holding its caller until
// ErrorWaitMax; the record stays queued and Close writes it.
func TestErrorWaitEndsWhenTheRateFalls(t *testing.T) {
	w := newPacedWriter(1024, time.Millisecond) // at most 1 MB/s
	b := newTestBus(t, w, Config{Capacity: 2 << 20}, nil)
	for i := 0; b.Stats().OutputRate == 0; i++ { // rateWindow of writing measures the output
		require.NoError(t, b.Enqueue(payload(1000+i, 1000)))
		require.NoError(t, b.Flush(context.Background()))
	}
	var buf []byte
	for i := 0; b.Stats().QueueDepth < b.Stats().OutputRate/4; i++ { // a quarter of a second ahead
		buf = rec(buf, 0, i, 200)
		require.NoError(t, b.Enqueue(buf))
	}
	w.pause.Store(int64(20 * time.Millisecond)) // now at most 50 kB/s: seconds of backlog

	start := time.Now()
	last := []byte("an error behind a backlog the output slowed down on\n")
	require.NoError(t, b.EnqueueWritten(last))
	assert.Less(t, time.Since(start), ErrorWaitMax*3/4, "the wait ends once it cannot succeed")
	assert.False(t, bytes.Contains(w.bytes(), last), "the record is still queued")

	w.pause.Store(0)
	closeBus(t, b)
	assert.True(t, bytes.Contains(w.bytes(), last), "and written by Close")
	requireAccounting(t, b.Stats())
}
