package main

// End-to-end tests of -check on what asyncbus writes with
// Options.Features.Sequence: rotation with gzip, Drop-mode losses, sampling, a
// failing output and kill -9.

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
	"github.com/asyncbus/asyncbus/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkFiles runs asyncbus-pretty -check on files.
func checkFiles(t *testing.T, files ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), append([]string{"-check"}, files...), strings.NewReader(""), &out, &errOut)
	return code, out.String() + errOut.String()
}

// checkBytes runs -check on data as standard input.
func checkBytes(t *testing.T, data []byte) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"-check"}, bytes.NewReader(data), &out, &errOut)
	return code, out.String() + errOut.String()
}

// rotationOrder lists filesink's rotated files of dir/app.log oldest first
// (its backups are named app-<time>[-N].log[.gz]), then app.log.
func rotationOrder(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "app-*"))
	require.NoError(t, err)
	key := func(name string) (string, int) {
		stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".gz"), ".log")
		n := 0
		if i := strings.LastIndexByte(stem, '-'); i > 0 && strings.Count(stem[i:], ".") == 0 && len(stem)-i <= 4 {
			if k, err := strconv.Atoi(stem[i+1:]); err == nil {
				stem, n = stem[:i], k
			}
		}
		return stem, n
	}
	slices.SortFunc(names, func(a, b string) int {
		sa, na := key(a)
		sb, nb := key(b)
		if c := strings.Compare(sa, sb); c != 0 {
			return c
		}
		return na - nb
	})
	return append(names, filepath.Join(dir, "app.log"))
}

func TestCheckRotatedGzippedFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := filesink.Open(filepath.Join(dir, "app.log"), filesink.Options{MaxSize: 64 << 10, Compress: true})
	require.NoError(t, err)
	h := asyncbus.NewHandler(f, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h)
	const n = 6000
	for i := range n {
		l.Info("request handled", "i", i, "path", "/api/v1/users/12345/orders")
	}
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())
	files := rotationOrder(t, dir)
	require.GreaterOrEqual(t, len(files), 4, "the records fill several files")
	gz := 0
	for _, name := range files {
		if strings.HasSuffix(name, ".gz") {
			gz++
		}
	}
	require.Positive(t, gz, "some rotated files are gzipped: %v", files)

	code, out := checkFiles(t, files...)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("run %s: numbers 1-%d: %d records, 0 dropped at 0 drop markers, 0 missing, 0 duplicated, 0 out of order: ok", h.Stats().RunID, n, n))

	// A file left out is a gap no marker explains.
	code, out = checkFiles(t, slices.Delete(slices.Clone(files), 1, 2)...)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "FAIL: unexplained gaps")
}

// gateWriter blocks every Write until open is closed.
type gateWriter struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestCheckDropModeLosses(t *testing.T) {
	w := &gateWriter{open: make(chan struct{})}
	h := asyncbus.NewHandler(w, &asyncbus.Options{Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop, Capacity: 4 << 10}, Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h)
	dropped := 0
	for i := range 2000 {
		if err := l.Handler().Handle(t.Context(), slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)); errors.Is(err, asyncbus.ErrDropped) {
			dropped++
		}
		if i == 1000 {
			close(w.open) // the output works again: later records get through, behind a marker
		}
	}
	require.NoError(t, h.Close())
	st := h.Stats()
	require.Positive(t, st.Dropped)
	require.EqualValues(t, dropped, st.Dropped)

	code, out := checkBytes(t, w.buf.Bytes())
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("numbers 1-2000: %d records, %d dropped at %d drop markers, 0 missing, 0 duplicated, 0 out of order: ok",
		st.Written-1, st.Dropped, st.DropMarkers)) // Stats count the run-end line as a record
}

// A record worded like a drop marker is no marker: with the record after
// it deleted from the output, -check reports that number missing.
func TestCheckForgedMarkerHidesNoLoss(t *testing.T) {
	for name, format := range map[string]asyncbus.Format{"json": asyncbus.JSON, "text": asyncbus.Text} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: format, Features: asyncbus.FeatureOptions{Sequence: true}})
			l := slog.New(h)
			l.Info("first")
			l.Warn("asyncbus: records dropped", "dropped", 3) // numbered 2
			l.Info("lost")                                    // numbered 3, deleted below
			l.Info("last")
			require.NoError(t, h.Close())
			require.Zero(t, h.Stats().Dropped, "the run dropped nothing")

			lines := strings.SplitAfter(buf.String(), "\n")
			require.Contains(t, lines[2], "lost")
			tampered := strings.Join(slices.Delete(lines, 2, 3), "")

			code, out := checkBytes(t, []byte(tampered))
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "numbers 1-4: 3 records, 0 dropped at 0 drop markers, 1 missing")
			assert.Contains(t, out, "missing: 3\n")
		})
	}
}

func TestCheckSampledRecordsAreNoGap(t *testing.T) {
	sampler, err := sampling.NewSampler(sampling.Config{Tick: time.Hour, First: 10})
	require.NoError(t, err)
	var buf bytes.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: asyncbus.Logfmt, Features: asyncbus.FeatureOptions{Sequence: true, Sampler: sampler}})
	l := slog.New(h)
	for i := range 500 {
		l.Info("same message", "i", i)
	}
	require.NoError(t, h.Close())
	st := h.Stats()
	require.EqualValues(t, 490, st.Sampled)
	require.Positive(t, st.SampleMarkers)

	code, out := checkBytes(t, buf.Bytes())
	assert.Equal(t, 0, code, out)
	// Ten records and the marker, numbered 1-11: the sampled ones took no number.
	// Stats count the run-end line as a record.
	assert.Contains(t, out, fmt.Sprintf("numbers 1-%d: %d records, 0 dropped at 0 drop markers, 0 missing", st.Written-1, st.Written-1))
	assert.Contains(t, buf.String(), "suppressed 490 similar records")
}

// failingWriter fails every write while failing is set.
type failingWriter struct {
	failing atomic.Bool
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.failing.Load() {
		return 0, errors.New("disk on fire")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestCheckFailedRecordsAreAGap(t *testing.T) {
	w := &failingWriter{}
	w.failing.Store(true)
	h := asyncbus.NewHandler(w, &asyncbus.Options{OnError: func(error) {}, Retry: asyncbus.RetryOptions{Attempts: 1, MaxBackoff: time.Millisecond}, Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h)
	for i := range 5 {
		l.Info("before", "i", i)
	}
	require.Error(t, h.Flush()) // the records failed: their numbers are not in the output
	w.failing.Store(false)
	for i := range 5 {
		l.Info("after", "i", i)
	}
	_ = h.Close() // its error repeats the failure Flush returned
	st := h.Stats()
	require.EqualValues(t, 5, st.Failed)
	require.EqualValues(t, 6, st.Written, "five records and the run-end line")

	code, out := checkBytes(t, w.buf.Bytes())
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "numbers 1-10: 5 records, 0 dropped at 0 drop markers, 5 missing")
	assert.Contains(t, out, "missing: 1-5")
}

const seqChildEnv = "ASYNCBUS_PRETTY_SEQ_CHILD"

// seqChild logs numbered records to the file path until it is killed.
func seqChild(path string) int {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h := asyncbus.NewHandler(f, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	l := slog.New(h)
	for i := 0; ; i++ {
		l.Info("request handled", "i", i, "path", "/api/v1/users/12345/orders")
	}
}

func TestCheckAfterKill9(t *testing.T) {
	if path := os.Getenv(seqChildEnv); path != "" {
		os.Exit(seqChild(path))
	}
	path := filepath.Join(t.TempDir(), "app.log")
	const runs = 3
	for r := range runs {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
		cmd.Env = append(os.Environ(), seqChildEnv+"="+path)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		// Kill it once this run has written at least 64 KiB: a condition
		// read from the file, polled.
		before := fileSize(path)
		deadline := time.Now().Add(30 * time.Second)
		for fileSize(path) < before+64<<10 {
			require.True(t, time.Now().Before(deadline), "run %d wrote nothing in 30 s", r)
			time.Sleep(time.Millisecond) // polling the file, not synchronisation
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
	}
	code, out := checkFiles(t, path)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, runs, strings.Count(out, ": ok\n"), out)
	assert.NotContains(t, out, "duplicated, first")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
