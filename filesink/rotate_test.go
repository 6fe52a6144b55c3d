package filesink

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of rotate.go: rotation by size and time, backup names, retention,
// compression, the symlink, and a rotation whose rename fails.

func TestRotateBySize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxSize   int64
		batch     int // records per WriteBatch; 0 uses Write
		records   int
		wantFiles int
	}{
		{"Write", 100, 0, 10, 4},                   // 3 x 32 bytes per file
		{"batches of 2", 100, 2, 10, 5},            // 64 bytes per file
		{"batch larger than MaxSize", 50, 4, 8, 2}, // never split: 128 bytes each
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			clk := newClock(t0)
			f, err := Open(path, Options{MaxSize: tc.maxSize, Clock: clk.Now, UTC: true})
			require.NoError(t, err)
			var want []string
			for i := 0; i < tc.records; {
				clk.Add(time.Millisecond)
				if tc.batch == 0 {
					r := rec("r", i, 32)
					_, err := f.Write(r)
					require.NoError(t, err)
					want = append(want, string(r[:31]))
					i++
					continue
				}
				var b [][]byte
				for j := 0; j < tc.batch; j++ {
					b = append(b, rec("r", i, 32))
					want = append(want, string(b[j][:31]))
					i++
				}
				n, err := f.WriteBatch(b)
				require.NoError(t, err)
				require.Equal(t, tc.batch, n)
			}
			require.NoError(t, f.Close())
			files := backupFiles(t, dir, "app-")
			require.Len(t, files, tc.wantFiles-1)
			files = append(files, path)
			assert.Equal(t, want, scanAll(t, files...))
			for _, name := range files {
				fi, err := os.Stat(name)
				require.NoError(t, err)
				if tc.batch*32 <= int(tc.maxSize) {
					assert.LessOrEqual(t, fi.Size(), tc.maxSize, name)
				}
			}
		})
	}
}

func TestRotateByTime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rotate  Rotation
		steps   []time.Duration // clock advance before each write
		backups []string
	}{
		{"hourly", RotateHourly,
			[]time.Duration{0, 30 * time.Minute, 10 * time.Minute, 2 * time.Hour},
			[]string{"app-2025-03-14T11-00-30.000.log", "app-2025-03-14T13-00-30.000.log"}},
		{"daily", RotateDaily,
			[]time.Duration{0, 12 * time.Hour, 2 * time.Hour, 24 * time.Hour, time.Minute},
			[]string{"app-2025-03-15T00-20-30.000.log", "app-2025-03-16T00-20-30.000.log"}},
		{"none", RotateNone,
			[]time.Duration{0, 48 * time.Hour},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := newClock(t0)
			f, err := Open(filepath.Join(dir, "app.log"), Options{Rotate: tc.rotate, UTC: true, Clock: clk.Now})
			require.NoError(t, err)
			for i, d := range tc.steps {
				clk.Add(d)
				_, err := f.Write(rec("t", i, 20))
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			var names []string
			for _, b := range backupFiles(t, dir, "app-") {
				names = append(names, filepath.Base(b))
			}
			assert.Equal(t, tc.backups, names)
			all := backupFiles(t, dir, "app-")
			assert.Len(t, scanAll(t, append(all, filepath.Join(dir, "app.log"))...), len(tc.steps))
		})
	}
}

func TestRotateExistingFileFromEarlierPeriod(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
	require.NoError(t, os.Chtimes(path, t0.Add(-48*time.Hour), t0.Add(-48*time.Hour)))
	clk := newClock(t0)
	f, err := Open(path, Options{Rotate: RotateDaily, UTC: true, Clock: clk.Now})
	require.NoError(t, err)
	_, err = f.Write([]byte("new\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b := backupFiles(t, dir, "app-")
	require.Len(t, b, 1)
	assert.Equal(t, []string{"old"}, readLines(t, b[0]))
	assert.Equal(t, []string{"new"}, readLines(t, path))
}

func TestBackupNameCollision(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(t0) // never advances: every rotation has the same time
	f, err := Open(filepath.Join(dir, "app.log"), Options{Clock: clk.Now, UTC: true, MaxBackups: 10})
	require.NoError(t, err)
	for i := range 3 {
		_, err := f.Write(rec("c", i, 20))
		require.NoError(t, err)
		require.NoError(t, f.Rotate())
	}
	require.NoError(t, f.Rotate(), "rotating an empty file is a no-op")
	require.NoError(t, f.Close())
	var names []string
	for _, b := range backupFiles(t, dir, "app-") {
		names = append(names, filepath.Base(b))
	}
	assert.Equal(t, []string{
		"app-2025-03-14T10-20-30.000-1.log",
		"app-2025-03-14T10-20-30.000-2.log",
		"app-2025-03-14T10-20-30.000.log",
	}, names)
	list, err := f.backups()
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, 2, list[0].seq, "newest first")
	assert.Equal(t, 0, list[2].seq)
}

func TestRotateConcurrentWithWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	f, err := Open(path, Options{MaxSize: 4 << 10})
	require.NoError(t, err)
	const writers, batches, perBatch = 4, 200, 8
	var wg sync.WaitGroup
	stop := make(chan struct{})
	rotations := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, f.Rotate())
			rotations++
		}
	}()
	var ww sync.WaitGroup
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for b := range batches {
				var batch [][]byte
				for i := range perBatch {
					batch = append(batch, rec(fmt.Sprintf("w%d", w), b*perBatch+i, 48))
				}
				n, err := f.WriteBatch(batch)
				assert.NoError(t, err)
				assert.Equal(t, perBatch, n)
			}
		}()
	}
	ww.Wait()
	close(stop)
	wg.Wait()
	require.NoError(t, f.Close())
	files := append(backupsOldestFirst(t, f), path)
	seen := map[string]bool{}
	last := map[string]int{}
	for _, l := range scanAll(t, files...) {
		require.Len(t, l, 47, "whole record")
		assert.False(t, seen[l], "duplicate %q", l)
		seen[l] = true
		var w, i int
		_, err := fmt.Sscanf(l, "w%d-%d", &w, &i)
		require.NoError(t, err)
		if prev, ok := last[fmt.Sprint(w)]; ok {
			assert.Greater(t, i, prev, "per-writer order across rotations")
		}
		last[fmt.Sprint(w)] = i
	}
	assert.Len(t, seen, writers*batches*perBatch)
	t.Logf("%d rotations, %d files", rotations, len(files))
}

// backupsOldestFirst lists f's backups in rotation order (names with a "-N"
// suffix do not sort lexically).
func backupsOldestFirst(t *testing.T, f *File) []string {
	t.Helper()
	list, err := f.backups()
	require.NoError(t, err)
	var names []string
	for i := len(list) - 1; i >= 0; i-- {
		names = append(names, list[i].names()...)
	}
	return names
}

func TestRetention(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxBackups int
		maxAge     time.Duration
		compress   bool
		keep       []int // indexes of the rotations whose backups survive
	}{
		{"MaxBackups", 2, 0, false, []int{3, 4}},
		{"MaxAge", 0, 150 * time.Minute, false, []int{2, 3, 4}},
		{"both", 3, 90 * time.Minute, false, []int{3, 4}},
		{"MaxBackups compressed", 2, 0, true, []int{3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// One file from a foreign pattern must be left alone.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "app-notes.log"), []byte("x\n"), 0o644))
			clk := newClock(t0)
			f, err := Open(filepath.Join(dir, "app.log"), Options{
				Clock: clk.Now, UTC: true, MaxBackups: tc.maxBackups, MaxAge: tc.maxAge, Compress: tc.compress,
			})
			require.NoError(t, err)
			for i := range 5 {
				clk.Add(time.Hour)
				_, err := f.Write(rec("b", i, 20))
				require.NoError(t, err)
				require.NoError(t, f.Rotate())
			}
			// Rotation i happened at t0+(i+1)h; the last retention pass runs
			// after the last rotation, at the final time t0+5h.
			require.NoError(t, f.Close()) // waits for the pending retention pass
			var want []string
			for _, i := range tc.keep {
				name := "app-" + t0.Add(time.Duration(i+1)*time.Hour).Format(backupLayout) + ".log"
				if tc.compress {
					name += ".gz"
				}
				want = append(want, name)
			}
			var got []string
			for _, b := range backupFiles(t, dir, "app-2") {
				got = append(got, filepath.Base(b))
			}
			assert.Equal(t, want, got)
			assert.FileExists(t, filepath.Join(dir, "app-notes.log"))
		})
	}
}

func TestCompression(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	// Leftovers of a crash during compression: a temporary file, and a
	// backup whose .gz was already renamed into place.
	stale := filepath.Join(dir, "app-2025-01-01T00-00-00.000.log.gz.tmp")
	require.NoError(t, os.WriteFile(stale, []byte("partial gzip"), 0o644))
	done := filepath.Join(dir, "app-2025-01-02T00-00-00.000.log")
	require.NoError(t, os.WriteFile(done, []byte("old\n"), 0o644))
	writeGzip(t, done+".gz", "old\n")

	clk := newClock(t0)
	f, err := Open(path, Options{Compress: true, Clock: clk.Now, UTC: true})
	require.NoError(t, err)
	assert.NoFileExists(t, stale, "Open removes temporary files")
	var want []string
	for i := range 4 {
		clk.Add(time.Second)
		b := [][]byte{rec("z", 2*i, 40), rec("z", 2*i+1, 40)}
		_, err := f.WriteBatch(b)
		require.NoError(t, err)
		want = append(want, string(b[0]), string(b[1]))
		require.NoError(t, f.Rotate())
	}
	require.NoError(t, f.Close()) // waits for the compression
	files := backupFiles(t, dir, "app-")
	require.Len(t, files, 5)
	var got strings.Builder
	for _, name := range files {
		require.True(t, strings.HasSuffix(name, ".log.gz"), name)
		if name == done+".gz" {
			continue
		}
		got.WriteString(readGzip(t, name))
	}
	assert.Equal(t, strings.Join(want, ""), got.String())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, fi.Size())
}

func writeGzip(t *testing.T, name, content string) {
	t.Helper()
	out, err := os.Create(name)
	require.NoError(t, err)
	zw := gzip.NewWriter(out)
	_, err = zw.Write([]byte(content))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())
}

func readGzip(t *testing.T, name string) string {
	t.Helper()
	in, err := os.Open(name)
	require.NoError(t, err)
	defer in.Close()
	zr, err := gzip.NewReader(in)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

// Open removes only its own leftover compression temp files, not those of
// another sink with the same prefix in the same directory (app.json).
func TestRemoveTempsSparesOtherSinks(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "app-2024-01-01T00-00-00.000.json.gz.tmp")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o644))
	f, err := Open(filepath.Join(dir, "app.log"), Options{})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = os.Stat(other)
	require.NoError(t, err, "sibling sink's temp file was deleted")
}

func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "app.log")
	link := filepath.Join(dir, "current")
	require.NoError(t, os.Symlink("/nonexistent", link)) // a stale link is replaced
	clk := newClock(t0)
	f, err := Open(path, Options{Symlink: link, Clock: clk.Now, UTC: true})
	require.NoError(t, err)
	check := func(want string) {
		t.Helper()
		target, err := os.Readlink(link)
		require.NoError(t, err)
		assert.Equal(t, path, target)
		b, err := os.ReadFile(link)
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
	_, err = f.Write([]byte("a\n"))
	require.NoError(t, err)
	check("a\n")
	require.NoError(t, f.Rotate())
	_, err = f.Write([]byte("b\n"))
	require.NoError(t, err)
	check("b\n")
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Rename(path, path+".1")) // logrotate
	clk.Add(2 * DefaultCheckInterval)
	_, err = f.Write([]byte("c\n"))
	require.NoError(t, err)
	check("c\n")
	require.NoError(t, f.Close())
}

// flakyRename fails while failing is set (an immutable or read-only
// directory: EACCES/EPERM from rename(2)), then renames. With windows set it
// also refuses, as Windows does, to rename the file the File has open.
type flakyRename struct {
	mu      sync.Mutex
	failing bool
	calls   int
	windows *File
}

// errOpenElsewhere is the Windows refusal to rename an open file.
var errOpenElsewhere = errors.New("the process cannot access the file because it is being used by another process")

// rename is called with the File's mu held, so reading f.file is safe.
func (fr *flakyRename) rename(oldpath, newpath string) error {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.calls++
	if fr.windows != nil && fr.windows.file != nil && oldpath == fr.windows.path {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errOpenElsewhere}
	}
	if fr.failing {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EACCES}
	}
	return os.Rename(oldpath, newpath)
}

// TestRotateInWindowsOrder: with the order Windows needs (close, then
// rename), a rename that refuses open files never fails a rotation, and
// size and time rotation, retention and compression keep every record once,
// in order. The rename and lock paths run here as they run on Windows.
func TestRotateInWindowsOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeFirst bool
		wantErr    bool // the rotation's rename refused the open file
	}{
		{"Unix order fails on a Windows rename", false, true},
		{"Windows order", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			clk := newClock(t0)
			fr := &flakyRename{}
			var errs errSink
			f, err := open(path, Options{MaxSize: 400, MaxBackups: 3, Compress: true, OnError: errs.On, Clock: clk.Now, UTC: true},
				func(f *File) { f.rename, f.closeBeforeRename, fr.windows = fr.rename, tc.closeFirst, f })
			require.NoError(t, err)
			var want []string
			for i := range 40 {
				clk.Add(time.Millisecond)
				r := rec("r", i, 40)
				_, err := f.Write(r)
				require.NoError(t, err)
				want = append(want, strings.TrimSuffix(string(r), "\n"))
			}
			require.NoError(t, f.Close())
			if tc.wantErr {
				require.NotEmpty(t, errs.All())
				assert.ErrorIs(t, errs.All()[0], errOpenElsewhere)
				assert.Equal(t, want, readLines(t, path), "the file kept every record")
				return
			}
			assert.Empty(t, errs.All())
			backups := backupFiles(t, dir, "app-")
			require.Len(t, backups, 3, "retention kept MaxBackups")
			got := append(scanAll(t, backups...), readLines(t, path)...)
			assert.Equal(t, want[len(want)-len(got):], got, "the newest records, once each, in order")
		})
	}
}

// A rotation whose rename fails keeps appending to the
// current file (nothing fails), reports once, and rotates at the next size
// trigger once renaming works again.
func TestRotationRenameFailureKeepsWriting(t *testing.T) {
	t.Run("Unix order", func(t *testing.T) { testRenameFailureKeepsWriting(t, false) })
	t.Run("Windows order", func(t *testing.T) { testRenameFailureKeepsWriting(t, true) })
}

// testRenameFailureKeepsWriting is TestRotationRenameFailureKeepsWriting
// with rotation closing the file before the rename (closeFirst, as on
// Windows, with a rename that refuses open files) or not.
func testRenameFailureKeepsWriting(t *testing.T, closeFirst bool) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	fr := &flakyRename{failing: true}
	var errs errSink
	clk := newClock(t0)
	const maxSize = 4096
	f, err := open(path, Options{MaxSize: maxSize, OnError: errs.On, Clock: clk.Now, UTC: true},
		func(f *File) {
			f.rename, f.closeBeforeRename = fr.rename, closeFirst
			if closeFirst {
				fr.windows = f
			}
		})
	require.NoError(t, err)
	const n = 4000
	var want []string
	for i := range n {
		r := rec("r", i, 40)
		_, err := f.Write(r)
		require.NoError(t, err, "record %d", i)
		want = append(want, strings.TrimSuffix(string(r), "\n"))
		clk.Add(2 * DefaultErrorInterval) // the rate limit would hide repeats: step past it
	}
	assert.Equal(t, want, readLines(t, path), "every record is in the current file, in order")
	assert.Empty(t, backupFiles(t, dir, "app-"), "no rotation happened")
	all := errs.All()
	require.Len(t, all, 1, "one report for the failing rename: %v", all)
	assert.ErrorIs(t, all[0], syscall.EACCES)
	assert.Contains(t, all[0].Error(), "writing on to "+path)
	// Retried at the next size trigger (another MaxSize of records), not
	// on every write.
	assert.LessOrEqual(t, fr.calls, n*40/maxSize+1)

	// Renaming works again: the next trigger rotates, the backup holds
	// the 4000 records, the new file the next ones.
	fr.mu.Lock()
	fr.failing = false
	fr.mu.Unlock()
	var after []string
	for i := n; len(backupFiles(t, dir, "app-")) == 0; i++ {
		require.Less(t, i, n+maxSize/40+2, "rotation was not retried")
		r := rec("r", i, 40)
		_, err := f.Write(r)
		require.NoError(t, err)
		after = append(after, strings.TrimSuffix(string(r), "\n"))
	}
	require.NoError(t, f.Close())
	backups := backupFiles(t, dir, "app-")
	require.Len(t, backups, 1)
	assert.Equal(t, append(want, after...), scanAll(t, backups[0], path), "nothing lost or repeated across the rotation")
	assert.Len(t, errs.All(), 1, "the recovery raises no further report")
}
