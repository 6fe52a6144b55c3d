package logwriter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestWriterWritesEachLineAsGiven(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"lines with newlines", []string{"a\n", "bb\n", "ccc\n"}},
		{"no newline added", []string{"a", "b", "c\n"}},
		{"none removed", []string{"a\n\n", "\n"}},
		{"empty writes are no records", []string{"", "a\n", ""}},
		{"oversize line", []string{strings.Repeat("x", 300) + "\n", "y\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			w := New(sink, &Options{Ring: asyncbus.RingOptions{Capacity: 1024}}) // 1 KiB: lines over 128 bytes take the oversize path
			buf := make([]byte, 0, 512)
			records := 0
			for _, line := range tc.lines {
				buf = append(buf[:0], line...)
				n, err := w.Write(buf)
				require.NoError(t, err)
				require.Equal(t, len(line), n)
				for i := range buf {
					buf[i] = '!' // the logger reuses its buffer at once
				}
				if line != "" {
					records++
				}
			}
			require.NoError(t, w.Close())
			assert.Equal(t, strings.Join(tc.lines, ""), sink.String())
			st := w.Stats()
			assert.EqualValues(t, records, st.Enqueued)
			assert.EqualValues(t, records, st.Written)
		})
	}
}

// writerLine returns line i of the stream format f as a logger writes it,
// at level "info".
func writerLine(f asyncbus.Format, i int) string {
	switch f {
	case asyncbus.Text, asyncbus.Logfmt:
		return fmt.Sprintf("time=\"2026-12-02T07:48:48Z\" level=info msg=line i=%d\n", i)
	case asyncbus.ZapConsole:
		return fmt.Sprintf("2026-12-02T07:48:48.000Z\tINFO\tline\t{\"i\":%d}\n", i)
	}
	return fmt.Sprintf(`{"level":"info","ts":1764662928.5,"msg":"line","i":%d}`+"\n", i)
}

// droppedBy returns the number a drop marker line in format f reports, or
// false for another line.
func droppedBy(t *testing.T, f asyncbus.Format, line string) (int, bool) {
	if !strings.Contains(line, encode.DropMessage) {
		return 0, false
	}
	switch f {
	case asyncbus.Text, asyncbus.Logfmt:
		var n int
		_, err := fmt.Sscanf(line[strings.Index(line, "dropped="):], "dropped=%d", &n)
		require.NoError(t, err, line)
		assert.Contains(t, strings.ToLower(line), "level=warn", "a marker the text stream's readers understand: %s", line)
		return n, true
	case asyncbus.ZapConsole:
		var fields map[string]any
		require.NoError(t, json.Unmarshal([]byte(line[strings.Index(line, "{"):]), &fields), line)
		assert.Contains(t, line, "\tWARN\t", line)
		return int(fields["dropped"].(float64)), true
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m), "the marker is JSON in a JSON stream: %s", line)
	return int(m["dropped"].(float64)), true
}

func TestWriterAccountsForEveryLine(t *testing.T) {
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.ZapJSON, asyncbus.Text, asyncbus.Logfmt, asyncbus.ZapConsole} {
		t.Run(fmt.Sprint(int(f)), func(t *testing.T) {
			sink := &gateSink{gate: make(chan struct{})}
			w := New(sink, &Options{Format: f, Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop, Capacity: 4 << 10}})
			const n = 500
			for i := range n {
				got, err := w.Write([]byte(writerLine(f, i)))
				require.NoError(t, err, "a dropped line is counted and marked, not returned")
				require.Equal(t, len(writerLine(f, i)), got)
			}
			close(sink.gate)
			require.NoError(t, w.Close())
			st := w.Stats()
			require.Positive(t, st.Dropped, "a 4 KiB ring behind a stuck output overflows")
			assert.EqualValues(t, n, st.Enqueued)
			assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
			assert.EqualValues(t, n, st.LoggedInfo, "lines counted by the level read from them")
			written, dropped := 0, 0
			for _, line := range sink.Lines() {
				if d, ok := droppedBy(t, f, line); ok {
					dropped += d
					continue
				}
				written++
			}
			assert.EqualValues(t, st.Written, written)
			assert.EqualValues(t, st.Dropped, dropped, "the markers account for every drop")
		})
	}
}

// markedSink is an output that counts the Syncs made since its last write.
type markedSink struct {
	memSink
	synced atomic.Int32 // Syncs since the last write; atomic: the drainer writes and syncs while the test reads
}

func (s *markedSink) Write(p []byte) (int, error) {
	s.synced.Store(0)
	return s.memSink.Write(p)
}

func (s *markedSink) Sync() error {
	s.synced.Add(1)
	return s.memSink.Sync()
}

func TestWriterWaitsForErrorAndFatalLines(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		synced     bool
	}{
		{"zap error", `{"level":"error","msg":"boom"}` + "\n", false},
		{"zap fatal", `{"level":"fatal","msg":"boom"}` + "\n", true},
		{"zerolog panic", `{"level":"panic","message":"boom"}` + "\n", true},
		{"logrus text error", `time="t" level=error msg=boom` + "\n", false},
		{"zap console error", "2026-12-02T07:48:48.000Z\tERROR\tboom\n", false},
		{"klog error", "E1202 07:48:48.123456   12345 main.go:12] boom\n", false},
		{"klog fatal", "F1202 07:48:48.123456   12345 main.go:12] boom\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &markedSink{}
			w := New(sink, nil)
			defer func() { require.NoError(t, w.Close()) }()
			_, err := w.Write([]byte(tc.line))
			require.NoError(t, err)
			assert.Equal(t, tc.line, sink.String(), "in the output before Write returned")
			if tc.synced {
				assert.Positive(t, sink.synced.Load(), "synced before Write returned")
			}
		})
	}
}

func TestWriterSyncLevelOption(t *testing.T) {
	sink := &markedSink{}
	w := New(sink, &Options{SyncLevel: slog.LevelError})
	_, err := w.Write([]byte(`{"level":"error","msg":"boom"}` + "\n"))
	require.NoError(t, err)
	assert.Positive(t, sink.synced.Load(), "an error line synced with SyncLevel Error")
	require.NoError(t, w.Close())
}

func TestWriterStandardLogPanicIsFatal(t *testing.T) {
	sink := &markedSink{}
	w := New(sink, nil)
	l := log.New(w, "", 0)
	l.Print("first")
	require.Panics(t, func() { l.Panic("last words") })
	assert.Equal(t, "first\nlast words\n", sink.String(), "written before the panic went on")
	assert.Positive(t, sink.synced.Load(), "and synced")
	require.NoError(t, w.Close())
	st := w.Stats()
	assert.EqualValues(t, 1, st.LoggedInfo)
	assert.EqualValues(t, 1, st.LoggedFatal)
}

func TestWriterSync(t *testing.T) {
	sink := &markedSink{}
	w := New(sink, nil)
	for i := range 10 {
		_, err := w.Write([]byte(writerLine(asyncbus.JSON, i)))
		require.NoError(t, err)
	}
	require.NoError(t, w.Sync())
	assert.Len(t, sink.Lines(), 10, "every line written before Sync is in the output")
	assert.Positive(t, sink.synced.Load(), "and synced")
	require.NoError(t, w.Close())
}

func TestWriterSyncReportsTheOutputsError(t *testing.T) {
	var reports []error
	out := &brokenOutput{}
	out.broken.Store(true)
	var mu sync.Mutex
	w := New(out, &Options{OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err)
	}, Retry: asyncbus.RetryOptions{MaxBackoff: time.Microsecond}})
	_, err := w.Write([]byte(writerLine(asyncbus.JSON, 0)))
	require.NoError(t, err, "the failure is counted and reported, not returned by Write")
	require.Error(t, w.Sync())
	require.Error(t, w.Close())
	st := w.Stats()
	assert.EqualValues(t, 1, st.Failed)
	mu.Lock()
	defer mu.Unlock()
	assert.NotEmpty(t, reports)
}

func TestWriterAfterClose(t *testing.T) {
	reports := make(chan error, 10)
	sink := &memSink{}
	w := New(sink, &Options{OnError: func(err error) { reports <- err }})
	require.NoError(t, w.Close())
	for range 3 {
		n, err := w.Write([]byte("late line\n"))
		require.NoError(t, err)
		require.Equal(t, 10, n)
	}
	require.NoError(t, w.Close(), "Close is idempotent")
	select {
	case err := <-reports:
		require.ErrorIs(t, err, asyncbus.ErrClosed)
		assert.Contains(t, err.Error(), `msg "late line"`)
	case <-time.After(time.Minute): // a failure bound, not a synchronisation
		t.Fatal("the line after Close was never reported")
	}
	goleak.VerifyNone(t) // the report's goroutine is gone: every report made was delivered
	assert.Empty(t, reports, "one report in all")
	assert.EqualValues(t, 3, w.Stats().DroppedClosed)
	assert.Empty(t, sink.String())
}

func TestOptions(t *testing.T) {
	var reports []error
	w := New(&memSink{}, &Options{Ring: asyncbus.RingOptions{Capacity: -1}, OnError: func(err error) { reports = append(reports, err) }})
	require.NoError(t, w.Close())
	require.Len(t, reports, 1, "an invalid option is reported and replaced")
	assert.Contains(t, reports[0].Error(), "Capacity")
	def := asyncbus.NewHandler(&memSink{}, nil)
	require.NoError(t, def.Close())
	assert.Equal(t, def.Stats().Capacity, w.Stats().Capacity, "the Handler's default")

	_, err := Open(&memSink{}, &Options{Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop, BlockTimeout: time.Second}})
	require.Error(t, err, "OpenWriter refuses an invalid option")
	w, err = Open(&memSink{}, nil)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

func TestWriterAllocatesNothing(t *testing.T) {
	w := New(&memSink{}, nil)
	defer func() { require.NoError(t, w.Close()) }()
	line := []byte(writerLine(asyncbus.JSON, 1))
	allocs := testing.AllocsPerRun(1000, func() { _, _ = w.Write(line) })
	assert.Zero(t, allocs)
}

// The bounds of a log call's waits that the README's guarantees give: an
// Error record's write, a SyncLevel record's write and sync.
const (
	errorWaitBound = time.Second
	syncWaitBound  = 5 * time.Second
)

// The slow and hung outputs of the handler's caller-latency table: a
// Writer's callers are held within the bounds a Handler's are, line for
// record, as both go through one enqueue path.
func TestWriterCallersBoundedBySlowAndHungOutputs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		hang  bool
	}{
		{"write=1ms", time.Millisecond, false},
		{"write=5ms", 5 * time.Millisecond, false},
		{"write=50ms", 50 * time.Millisecond, false},
		{"write=hung", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &slowSink{delay: tc.delay, hang: tc.hang, release: make(chan struct{})}
			w := New(out, nil)
			var slowestInfo time.Duration
			for i := range 50 {
				start := time.Now()
				_, _ = w.Write([]byte(writerLine(asyncbus.JSON, i)))
				slowestInfo = max(slowestInfo, time.Since(start))
			}
			assert.Less(t, slowestInfo, errorWaitBound, "no info line waits for the output")
			start := time.Now()
			for range 5 {
				_, _ = w.Write([]byte(`{"level":"error","msg":"failed"}` + "\n"))
			}
			errorWaits := time.Since(start)
			assert.Less(t, errorWaits, 3*errorWaitBound, "five error lines")
			start = time.Now()
			syncErr := w.Sync()
			assert.Less(t, time.Since(start), syncWaitBound+errorWaitBound, "Sync is bounded")
			t.Logf("slowest info %v, five errors %v", slowestInfo, errorWaits)
			if tc.hang {
				assert.ErrorIs(t, syncErr, context.DeadlineExceeded, "a hung output's Sync gives up")
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				require.ErrorIs(t, w.CloseContext(ctx), context.DeadlineExceeded)
				close(out.release)
			} else {
				require.NoError(t, syncErr)
				require.NoError(t, w.Close())
			}
			st := w.Stats()
			assert.EqualValues(t, 55, st.Enqueued)
			assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
		})
	}
}

// slowSink is an output whose every Write takes delay; with hang set,
// Write never returns until release is closed.
type slowSink struct {
	delay   time.Duration
	hang    bool
	release chan struct{}
	memSink
}

func (s *slowSink) Write(p []byte) (int, error) {
	if s.hang {
		<-s.release
	}
	time.Sleep(s.delay) // the slow output itself, not synchronisation
	return s.memSink.Write(p)
}

// selfWritingSink writes a line of its own through the Writer it serves,
// from its Write and its Sync (an output reporting its own trouble through
// the logger that uses it).
type selfWritingSink struct {
	memSink
	w     atomic.Pointer[Writer] // atomic: set by the test while the drainer may call Write
	inner atomic.Int32           // atomic: the drainer and the test's goroutine both report
}

func (s *selfWritingSink) report() {
	if w := s.w.Load(); w != nil && s.inner.Add(1) <= 100 {
		_, _ = w.Write([]byte(`{"level":"error","msg":"from-output"}` + "\n"))
	}
}

func (s *selfWritingSink) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("from-output")) {
		s.report()
	}
	return s.memSink.Write(p)
}

func (s *selfWritingSink) Sync() error {
	s.report()
	return s.memSink.Sync()
}

func TestWriterReentrantOutputNeverDeadlocks(t *testing.T) {
	sink := &selfWritingSink{}
	w := New(sink, nil)
	sink.w.Store(w)
	finished := make(chan error, 1)
	go func() {
		for i := range 50 {
			_, _ = w.Write([]byte(writerLine(asyncbus.JSON, i)))
			_, _ = w.Write([]byte(`{"level":"fatal","msg":"line"}` + "\n"))
		}
		_ = w.Sync()
		finished <- w.Close()
	}()
	select {
	case err := <-finished:
		if err != nil {
			require.NotErrorIs(t, err, context.DeadlineExceeded)
		}
	case <-time.After(30 * time.Second): // a failure bound, not synchronisation
		t.Fatal("deadlock: an output writing through its own Writer")
	}
	st := w.Stats()
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
	assert.EqualValues(t, 100+min(sink.inner.Load(), 100), st.Enqueued+st.Dropped-st.DroppedClosed)
	assert.Equal(t, 100, strings.Count(sink.String(), `"msg":"line"`), "every line of the caller's")
}

func TestWriterToNilOutputCountsFailures(t *testing.T) {
	w := New(nil, &Options{OnError: func(error) {}})
	n, err := w.Write([]byte("x\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.ErrorContains(t, w.Close(), "nil writer")
	assert.EqualValues(t, 1, w.Stats().Failed)
}
