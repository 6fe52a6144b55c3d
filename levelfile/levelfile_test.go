package levelfile

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// configMap is a directory laid out as the kubelet lays out a ConfigMap
// volume: the data in a timestamped directory "..2026_12_02_...", a
// "..data" symbolic link to it, and each key a symbolic link through
// "..data". An update writes a new timestamped directory, points a
// temporary link at it, renames that link over "..data" (the atomic swap)
// and removes the old directory.
type configMap struct {
	dir     string
	current string // the timestamped directory ..data points to
	n       int
}

func newConfigMap(t *testing.T, key, content string) *configMap {
	t.Helper()
	cm := &configMap{dir: t.TempDir()}
	cm.update(t, key, content)
	require.NoError(t, os.Symlink(filepath.Join("..data", key), filepath.Join(cm.dir, key)))
	return cm
}

func (cm *configMap) path(key string) string { return filepath.Join(cm.dir, key) }

func (cm *configMap) update(t *testing.T, key, content string) {
	t.Helper()
	cm.n++
	ts := fmt.Sprintf("..2026_12_02_11_%02d_00.%09d", cm.n, 100+cm.n)
	require.NoError(t, os.Mkdir(filepath.Join(cm.dir, ts), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cm.dir, ts, key), []byte(content), 0o644))
	tmp := filepath.Join(cm.dir, "..data_tmp")
	require.NoError(t, os.Symlink(ts, tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(cm.dir, "..data")))
	if cm.current != "" {
		require.NoError(t, os.RemoveAll(filepath.Join(cm.dir, cm.current)))
	}
	cm.current = ts
}

// reports collects what a Watcher reports.
type reports struct {
	mu   sync.Mutex
	errs []string
}

func (r *reports) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err.Error())
}

func (r *reports) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// watchByHand starts a Watcher that never polls by itself (an hour's
// interval): the test polls it, so every step is deterministic.
func watchByHand(t *testing.T, rules *asyncbus.LevelRules, path string) (*Watcher, *reports) {
	t.Helper()
	r := &reports{}
	w, err := Watch(rules, path, &Options{Interval: time.Hour, OnError: r.add})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	return w, r
}

// TestConfigMapSwap: each swap of the ConfigMap's ..data link is applied
// at the next poll, also when the new file has the old one's size.
func TestConfigMapSwap(t *testing.T) {
	cm := newConfigMap(t, "levels", "info\ndb=debug\n")
	rules := asyncbus.MustParseLevelRules("warn")
	w, r := watchByHand(t, rules, cm.path("levels"))
	assert.Equal(t, "info,db=debug", rules.String(), "read by Watch")

	for _, tc := range []struct{ content, want string }{
		{"info\ndb=trace\n", "info,db=trace"}, // the same size
		{"# quieter\nwarn, db=info\nhttp.client=error\n", "warn,db=info,http.client=error"},
		{"", "info"},
	} {
		cm.update(t, "levels", tc.content)
		w.poll()
		assert.Equal(t, tc.want, rules.String())
	}
	assert.Empty(t, r.list())
}

// TestPlainFile: a file rewritten in place and one replaced by rename.
func TestPlainFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "levels")
	require.NoError(t, os.WriteFile(path, []byte("info"), 0o644))
	rules := asyncbus.MustParseLevelRules("")
	w, r := watchByHand(t, rules, path)

	require.NoError(t, os.WriteFile(path, []byte("debug,db=warn"), 0o644))
	w.poll()
	assert.Equal(t, "debug,db=warn", rules.String(), "rewritten")

	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte("error"), 0o644))
	require.NoError(t, os.Rename(tmp, path))
	w.poll()
	assert.Equal(t, "error", rules.String(), "replaced by rename")
	assert.Empty(t, r.list())
}

// TestUnchangedFileIsNotRead: a poll reads the file only when its stat
// changed. Here the content changes behind the watcher's back with the
// same file, size and modification time, and the poll does not see it;
// moving the time on does.
func TestUnchangedFileIsNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "levels")
	require.NoError(t, os.WriteFile(path, []byte("info"), 0o644))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	rules := asyncbus.MustParseLevelRules("")
	w, _ := watchByHand(t, rules, path)

	require.NoError(t, os.WriteFile(path, []byte("warn"), 0o644)) // same inode, same size
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	w.poll()
	assert.Equal(t, "info", rules.String(), "only a stat: the content was not read")

	later := fi.ModTime().Add(time.Second)
	require.NoError(t, os.Chtimes(path, later, later))
	w.poll()
	assert.Equal(t, "warn", rules.String())
}

// TestOversizeFileIsNotReadAgain: a file over MaxSize is refused once; the
// polls that find it unchanged stat it and open nothing, and a smaller
// update is read and applied.
func TestOversizeFileIsNotReadAgain(t *testing.T) {
	var opens atomic.Int64
	openFile = func(name string) (*os.File, error) { opens.Add(1); return os.Open(name) }
	t.Cleanup(func() { openFile = os.Open })
	path := filepath.Join(t.TempDir(), "levels")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("# padding\n", MaxSize/10+1)), 0o644))
	rules := asyncbus.MustParseLevelRules("error")
	w, r := watchByHand(t, rules, path)
	require.Equal(t, int64(1), opens.Load())
	for range 3 {
		w.poll()
	}
	assert.Equal(t, int64(1), opens.Load(), "an unchanged refused file is not opened again")
	assert.Len(t, r.list(), 1, "reported once")
	assert.Equal(t, "error", rules.String())

	require.NoError(t, os.WriteFile(path, []byte("warn\n"), 0o644))
	w.poll()
	assert.Equal(t, int64(2), opens.Load())
	assert.Equal(t, "warn", rules.String())
}

// TestBadUpdateKeepsRules: a bad update keeps the last good rules and is
// reported once, naming the file and the line, however many polls find
// it; a good update applies; the same mistake made again is reported
// again.
func TestBadUpdateKeepsRules(t *testing.T) {
	cm := newConfigMap(t, "levels", "info\ndb=debug\n")
	rules := asyncbus.MustParseLevelRules("")
	w, r := watchByHand(t, rules, cm.path("levels"))

	bad := "info\n\n# the next line is wrong\ndb=verbose\n"
	cm.update(t, "levels", bad)
	for range 3 {
		w.poll()
	}
	assert.Equal(t, "info,db=debug", rules.String(), "the last good rules stay")
	require.Len(t, r.list(), 1, "reported once")
	assert.Contains(t, r.list()[0], "levelfile: "+cm.path("levels")+" line 4: ")
	assert.Contains(t, r.list()[0], `unknown level "verbose"`)
	assert.Contains(t, r.list()[0], "keeping the rules in force")

	cm.update(t, "levels", "warn\n")
	w.poll()
	assert.Equal(t, "warn", rules.String())
	cm.update(t, "levels", bad)
	w.poll()
	assert.Len(t, r.list(), 2, "reported again after a good update")
	assert.Equal(t, "warn", rules.String())
}

// TestBadFiles names the line at fault for each kind of mistake.
func TestBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"bad level", "info\ndb=loud", "line 2: "},
		{"bad name", "info\n\n\nd b=info", "line 4: "},
		{"second default", "info\ndb=debug\nwarn", "line 3 clashes with an earlier line: "},
		{"logger twice", "db=debug\nhttp=info,DB=warn", "line 2 clashes with an earlier line: "},
		{"too large", strings.Repeat("# padding\n", MaxSize/10+1), "larger than 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "levels")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			rules := asyncbus.MustParseLevelRules("error")
			_, r := watchByHand(t, rules, path)
			require.Len(t, r.list(), 1, "the first read is reported by Watch")
			assert.Contains(t, r.list()[0], tc.want)
			assert.Equal(t, "error", rules.String(), "rules untouched")
		})
	}
}

// TestMissingFile: a file that is missing is reported once and the rules
// stay; once it is there, it is applied; missing again, reported again.
func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "levels")
	rules := asyncbus.MustParseLevelRules("warn")
	w, r := watchByHand(t, rules, path)
	w.poll()
	require.Len(t, r.list(), 1)
	assert.Contains(t, r.list()[0], "no such file")
	assert.Equal(t, "warn", rules.String())

	require.NoError(t, os.WriteFile(path, []byte("debug"), 0o644))
	w.poll()
	assert.Equal(t, "debug", rules.String())
	require.NoError(t, os.Remove(path))
	w.poll()
	w.poll()
	assert.Len(t, r.list(), 2)
	assert.Equal(t, "debug", rules.String())
}

// TestPollingGoroutine: the Watcher's own goroutine applies a swap, and
// Close ends it (goleak checks that no goroutine is left).
func TestPollingGoroutine(t *testing.T) {
	cm := newConfigMap(t, "levels", "info")
	rules := asyncbus.MustParseLevelRules("")
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules})
	defer h.Close()
	db := h.Named("db")
	w, err := Watch(rules, cm.path("levels"), &Options{Interval: 5 * time.Millisecond})
	require.NoError(t, err)
	assert.False(t, db.Enabled(t.Context(), slog.LevelDebug))
	cm.update(t, "levels", "info,db=debug")
	require.Eventually(t, func() bool { return db.Enabled(t.Context(), slog.LevelDebug) },
		10*time.Second, time.Millisecond, "the swap reaches an existing handler")
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "idempotent")
}

func TestWatchArguments(t *testing.T) {
	rules := asyncbus.MustParseLevelRules("")
	_, err := Watch(nil, "x", nil)
	assert.Error(t, err)
	_, err = Watch(rules, "", nil)
	assert.Error(t, err)
	_, err = Watch(rules, "x", &Options{Interval: -time.Second})
	assert.Error(t, err)
}
