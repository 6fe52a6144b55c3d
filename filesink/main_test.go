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

// readLines reads a file and checks that it holds only whole lines.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
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
