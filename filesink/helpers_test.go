package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Helpers shared by the package's internal tests: a fake clock, an OnError
// collector, record and file readers, a writev that fails part-way
// (failingWriter) and another program's append (appendTo). Helpers that one
// test file uses stay in that file.

var t0 = time.Date(2025, 3, 14, 10, 20, 30, 0, time.UTC)

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// errSink collects OnError calls.
type errSink struct {
	mu   sync.Mutex
	errs []error
}

func (s *errSink) On(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *errSink) All() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// rec is a record "<tag>-<i> padding\n" of exactly size bytes (size >= 16).
func rec(tag string, i, size int) []byte {
	b := fmt.Appendf(nil, "%s-%06d ", tag, i)
	for len(b) < size-1 {
		b = append(b, 'x')
	}
	return append(b[:size-1], '\n')
}

// readLines reads a file (gunzipped if its name ends in .gz) and checks
// that it holds only whole lines.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	var b []byte
	if strings.HasSuffix(name, gzExt) {
		b = []byte(readGzip(t, name))
	} else {
		var err error
		b, err = os.ReadFile(name)
		require.NoError(t, err)
	}
	if len(b) == 0 {
		return nil
	}
	require.Equal(t, byte('\n'), b[len(b)-1], "%s ends in a torn line", name)
	return strings.Split(string(b[:len(b)-1]), "\n")
}

// backupFiles lists the rotated files of base in dir (sorted by name).
func backupFiles(t *testing.T, dir, prefix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// scanAll concatenates the lines of files in order.
func scanAll(t *testing.T, files ...string) []string {
	t.Helper()
	var all []string
	for _, name := range files {
		all = append(all, readLines(t, name)...)
	}
	return all
}

func syncCount(f *File) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// failingWriter makes the next writes store only part of their bytes and
// fail with errno, then behaves normally again.
type failingWriter struct {
	mu       sync.Mutex
	failures int   // writes left to fail
	keep     int   // bytes each failing write stores
	errno    error // error of a failing write
	calls    int
}

func (w *failingWriter) writev(fd handle, iovs [][]byte) (int, error) {
	w.mu.Lock()
	w.calls++
	fail := w.failures > 0
	if fail {
		w.failures--
	}
	keep := w.keep
	w.mu.Unlock()
	if !fail {
		return writevFD(fd, iovs)
	}
	var part [][]byte
	for _, b := range iovs {
		if keep == 0 {
			break
		}
		n := min(keep, len(b))
		part = append(part, b[:n])
		keep -= n
	}
	n, err := writevFD(fd, part)
	if err != nil {
		return n, err
	}
	return n, w.errno
}

// appendTo appends s to the file at path as another program would
// (O_APPEND, its own descriptor).
func appendTo(t *testing.T, path, s string) {
	t.Helper()
	o, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = o.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, o.Close())
}
