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

func TestTornTailRepair(t *testing.T) {
	long := strings.Repeat("y", 3*repairChunk) // the search crosses chunks
	for _, tc := range []struct {
		name, content, wantLog, wantSide string
	}{
		{"clean", "a\nb\n", "a\nb\n", ""},
		{"empty", "", "", ""},
		{"half a line", "a\nb\n{\"seq\":3,\"ms", "a\nb\n", "{\"seq\":3,\"ms"},
		{"no newline at all", "torn", "", "torn"},
		{"long fragment", "a\n" + long, "a\n", long},
		{"newline far back", long + "\n" + long, long + "\n", long},
		{"zero tail", "a\n\x00\x00\x00", "a\n", "\x00\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			var errs errSink
			f, err := Open(path, Options{OnError: errs.On, Clock: newClock(t0).Now, UTC: true})
			require.NoError(t, err)
			_, err = f.Write([]byte("next\n"))
			require.NoError(t, err)
			r := f.Repaired()
			require.NoError(t, f.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.wantLog+"next\n", string(b))
			if tc.wantSide == "" {
				assert.Nil(t, r)
				assert.Empty(t, errs.All())
				return
			}
			require.NotNil(t, r)
			assert.Equal(t, &TailRepair{
				Path:     path,
				Offset:   int64(len(tc.wantLog)),
				Fragment: int64(len(tc.wantSide)),
				SideFile: path + ".torn-2025-03-14T10-20-30.000",
			}, r)
			side, err := os.ReadFile(r.SideFile)
			require.NoError(t, err)
			assert.Equal(t, tc.wantSide, string(side))
			require.Len(t, errs.All(), 1)
			var got *TailRepair
			require.ErrorAs(t, errs.All()[0], &got)
			assert.Equal(t, r, got)
			assert.Contains(t, got.Error(), "torn")
		})
	}
}

func TestTornTailSideFileCollision(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clk := newClock(t0)
	for i := range 2 {
		require.NoError(t, os.WriteFile(path, []byte("ok\ntorn"), 0o644))
		f, err := Open(path, Options{OnError: func(error) {}, Clock: clk.Now, UTC: true})
		require.NoError(t, err)
		want := path + ".torn-2025-03-14T10-20-30.000"
		if i == 1 {
			want += "-1"
		}
		assert.Equal(t, want, f.Repaired().SideFile)
		require.NoError(t, f.Close())
	}
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

func (w *failingWriter) writev(fd int, iovs [][]byte) (int, error) {
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

func TestWriteFailureThenRecovery(t *testing.T) {
	recs := [][]byte{rec("e", 0, 30), rec("e", 1, 30), rec("e", 2, 30), rec("e", 3, 30)}
	for _, tc := range []struct {
		name        string
		errno       error
		failures    int // the write, and then the attempt to complete the record
		keep        int
		wantWritten int
		wantLines   int
	}{
		{"ENOSPC mid-record, cut back", syscall.ENOSPC, 2, 45, 1, 1},
		{"EIO at record boundary", syscall.EIO, 1, 60, 2, 2}, // nothing to complete
		{"ENOSPC nothing written", syscall.ENOSPC, 1, 0, 0, 0},
		{"ENOSPC mid-record, completed", syscall.ENOSPC, 1, 75, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			w := &failingWriter{failures: tc.failures, keep: tc.keep, errno: tc.errno}
			var errs errSink
			clk := newClock(t0)
			f, err := open(path, Options{OnError: errs.On, Clock: clk.Now}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			n, err := f.WriteBatch(recs)
			require.ErrorIs(t, err, tc.errno)
			assert.Equal(t, tc.wantWritten, n)
			assert.Len(t, readLines(t, path), tc.wantLines, "only whole records are in the file")
			assert.Empty(t, errs.All(), "write errors go to the caller (the bus reports them), not to the sink's callback")

			// The bus retries the rest after a back-off: the disk has space again.
			n2, err := f.WriteBatch(recs[n:])
			require.NoError(t, err)
			assert.Equal(t, len(recs)-n, n2)
			require.NoError(t, f.Close())
			assert.Equal(t, scanAll(t, path), func() []string {
				var s []string
				for _, r := range recs {
					s = append(s, strings.TrimSuffix(string(r), "\n"))
				}
				return s
			}())
		})
	}
}

// TestErrorCallbackIsRateLimited: background events reach OnError at most
// once per ErrorInterval, the suppressed ones counted in the next report and
// by Close; write errors are returned and never reach it.
func TestErrorCallbackIsRateLimited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w := &failingWriter{failures: 1000, errno: syscall.ENOSPC}
	var errs errSink
	clk := newClock(t0)
	f, err := open(path, Options{OnError: errs.On, Clock: clk.Now}, func(f *File) { f.writev = w.writev })
	require.NoError(t, err)
	for range 10 {
		_, err := f.Write([]byte("x\n"))
		require.ErrorIs(t, err, syscall.ENOSPC)
	}
	require.Empty(t, errs.All(), "write errors are the caller's to report")

	background := errors.New("filesink: compress app.log.1: disk quota exceeded")
	for range 10 {
		f.report(background)
	}
	require.Len(t, errs.All(), 1, "one report per ErrorInterval")
	clk.Add(DefaultErrorInterval)
	f.report(background)
	require.Len(t, errs.All(), 2)
	assert.Contains(t, errs.All()[1].Error(), "9 more errors suppressed")
	f.report(background)
	require.NoError(t, f.Close())
	require.Len(t, errs.All(), 3, "Close reports the errors still suppressed")
	assert.Contains(t, errs.All()[2].Error(), "1 errors were suppressed")
	assert.Empty(t, readLines(t, path))
}

// flakyTruncate fails its next failures calls with err, then truncates
// for real.
type flakyTruncate struct {
	mu       sync.Mutex
	failures int
	err      error
}

func (ft *flakyTruncate) truncate(fd int, size int64) error {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.failures > 0 {
		ft.failures--
		return ft.err
	}
	return truncateFD(fd, size)
}

func (ft *flakyTruncate) failNext(n int) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.failures = n
}

func TestCutBackFailureBlocksFurtherWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w := &failingWriter{failures: 2, keep: 5, errno: syscall.EIO}
	tr := &flakyTruncate{failures: 2, err: errors.New("truncate failed")}
	truncErr := tr.err
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	n, err := f.Write([]byte("0123456789\n"))
	assert.Zero(t, n)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, err, truncErr)
	// The torn bytes are still there, so the next write must not go after them.
	n, err = f.Write([]byte("abc\n"))
	assert.Zero(t, n)
	require.ErrorIs(t, err, truncErr)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(b), "the completion attempt got further, and failed too")
	// Now the cut back succeeds and writing resumes after the last whole record.
	n, err = f.Write([]byte("abc\n"))
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	require.NoError(t, f.Close())
	assert.Equal(t, []string{"abc"}, readLines(t, path))
}

func TestShortWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	calls := 0
	f, err := open(path, Options{}, func(f *File) {
		f.writev = func(fd int, iovs [][]byte) (int, error) {
			calls++
			// Store 7 bytes per call, no error: a legal short write.
			var part [][]byte
			keep := 7
			for _, b := range iovs {
				n := min(keep, len(b))
				part = append(part, b[:n])
				if keep -= n; keep == 0 {
					break
				}
			}
			return writevFD(fd, part)
		}
	})
	require.NoError(t, err)
	recs := [][]byte{rec("s", 0, 20), {}, rec("s", 1, 20), rec("s", 2, 20)}
	n, err := f.WriteBatch(recs)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, 9, calls) // ceil(60/7)
	require.NoError(t, f.Close())
	assert.Len(t, readLines(t, path), 3)
}

func TestZeroProgressWritesDoNotSpin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		errno error
		want  error
	}{
		{"no progress, no error", nil, io.ErrShortWrite},
		{"EINTR forever", syscall.EINTR, syscall.EINTR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			calls := 0
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
				f.writev = func(int, [][]byte) (int, error) { calls++; return 0, tc.errno }
			})
			require.NoError(t, err)
			n, err := f.WriteBatch([][]byte{[]byte("a\n")})
			assert.Zero(t, n)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, maxZeroWrites, calls, "bounded retries")
			require.NoError(t, f.Close())
		})
	}
}

func TestReopenAfterRenameOrDelete(t *testing.T) {
	for _, tc := range []struct {
		name    string
		act     func(path string) error
		oldName string // where the earlier records end up; "" if deleted
	}{
		{"rename (logrotate create)", func(p string) error { return os.Rename(p, p+".1") }, ".1"},
		{"delete", os.Remove, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			clk := newClock(t0)
			f, err := Open(path, Options{Clock: clk.Now})
			require.NoError(t, err)
			_, err = f.Write([]byte("before\n"))
			require.NoError(t, err)
			require.NoError(t, tc.act(path))
			_, err = f.Write([]byte("still old\n")) // within CheckInterval: old file
			require.NoError(t, err)
			clk.Add(DefaultCheckInterval)
			_, err = f.Write([]byte("after\n"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, []string{"after"}, readLines(t, path))
			if tc.oldName != "" {
				assert.Equal(t, []string{"before", "still old"}, readLines(t, path+tc.oldName))
			}
		})
	}
}

func TestRotateReopensAfterLogrotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{CheckInterval: -1})
	require.NoError(t, err)
	_, err = f.Write([]byte("before\n"))
	require.NoError(t, err)
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, f.Rotate()) // SIGHUP after logrotate: reopen, no rename
	_, err = f.Write([]byte("after\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, []string{"after"}, readLines(t, path))
	assert.Equal(t, []string{"before"}, readLines(t, path+".1"))
	assert.Empty(t, backupFiles(t, filepath.Dir(path), "app-"))
}

func TestTruncatedUnderneath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clk := newClock(t0)
	f, err := Open(path, Options{Clock: clk.Now, MaxSize: 100})
	require.NoError(t, err)
	_, err = f.Write(rec("c", 0, 60))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 0)) // copytruncate
	clk.Add(DefaultCheckInterval)
	_, err = f.Write(rec("c", 1, 60)) // fits: the size was re-read
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Len(t, readLines(t, path), 1)
	assert.Empty(t, backupFiles(t, dir, "app-"))
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

func TestSyncPolicies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		policy     SyncPolicy
		advance    time.Duration // clock step before each write
		wantWrites int           // syncs after 4 writes (before Close)
	}{
		{"never", SyncNever, time.Second, 0},
		{"every batch", SyncEveryBatch, 0, 4},
		{"interval, fast writes", SyncInterval, 100 * time.Millisecond, 0},
		{"interval, slow writes", SyncInterval, 600 * time.Millisecond, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			clk := newClock(t0)
			tick := make(chan time.Time)
			f, err := Open(path, Options{Sync: tc.policy, Clock: clk.Now, testTick: tick})
			require.NoError(t, err)
			for range 4 {
				clk.Add(tc.advance)
				_, err := f.WriteBatch([][]byte{[]byte("a\n"), []byte("b\n")})
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantWrites, syncCount(f))
			require.NoError(t, f.Sync(), "Sync always syncs")
			assert.Equal(t, tc.wantWrites+1, syncCount(f))
			require.NoError(t, f.Close())
		})
	}
}

func TestSyncIntervalWhileIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	clk := newClock(t0)
	tick := make(chan time.Time)
	done := make(chan struct{})
	f, err := Open(path, Options{Sync: SyncInterval, Clock: clk.Now, testTick: tick, testTickDone: done})
	require.NoError(t, err)
	_, err = f.Write([]byte("a\n"))
	require.NoError(t, err)
	require.Equal(t, 0, syncCount(f))
	tick <- t0
	<-done
	assert.Equal(t, 0, syncCount(f), "not yet an interval since the last sync")
	clk.Add(DefaultSyncInterval)
	tick <- t0
	<-done
	assert.Equal(t, 1, syncCount(f), "idle dirty data is synced after the interval")
	clk.Add(DefaultSyncInterval)
	tick <- t0
	<-done
	assert.Equal(t, 1, syncCount(f), "nothing new to sync")
	require.NoError(t, f.Close())
}

func TestPreallocate(t *testing.T) {
	const chunk = 1 << 20
	path := filepath.Join(t.TempDir(), "app.log")
	var errs errSink
	f, err := Open(path, Options{Preallocate: chunk, MaxSize: chunk + chunk/4, OnError: errs.On})
	require.NoError(t, err)
	r := rec("p", 0, 100)
	_, err = f.Write(r)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(len(r)), fi.Size(), "the size is unaffected")
	assert.GreaterOrEqual(t, allocated(t, path), int64(chunk), "space is reserved")
	// Grow past the first chunk, then rotate: the backup is trimmed.
	big := make([][]byte, 0, 218) // 1,308,000 bytes: fits MaxSize with the first record
	for i := range cap(big) {
		big = append(big, rec("p", i+1, 6000))
	}
	_, err = f.WriteBatch(big)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, allocated(t, path), int64(2*chunk))
	_, err = f.WriteBatch(big[:2]) // exceeds MaxSize: rotates first
	require.NoError(t, err)
	backups := backupFiles(t, filepath.Dir(path), "app-")
	require.Len(t, backups, 1)
	fi, err = os.Stat(backups[0])
	require.NoError(t, err)
	assert.Less(t, allocated(t, backups[0]), fi.Size()+64<<10, "rotation releases the reserve")
	require.NoError(t, f.Close())
	assert.Less(t, allocated(t, path), int64(chunk), "Close releases the reserve")
	assert.Len(t, readLines(t, path), 2)
	assert.Empty(t, errs.All())
}

func allocated(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
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

// A preallocation error disables preallocation only when the file system
// cannot preallocate at all; running out of space is reported and tried
// again at the next chunk (not at every write). Writing goes on either way.
func TestPreallocateFailures(t *testing.T) {
	const chunk = 4096
	for _, tc := range []struct {
		name      string
		err       error
		wantCalls int // for 3 chunks' worth of 1000-byte records
		wantMsg   string
	}{
		{"out of space", syscall.ENOSPC, 3, "retried at the next chunk"},
		{"not supported", syscall.EOPNOTSUPP, 1, "disabled from now on"},
		{"no such call", syscall.ENOSYS, 1, "disabled from now on"},
		{"invalid", syscall.EINVAL, 1, "disabled from now on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			var errs errSink
			clk := newClock(t0)
			calls := 0
			f, err := open(path, Options{Preallocate: chunk, OnError: errs.On, Clock: clk.Now}, func(f *File) {
				f.allocate = func(int, int64, int64) error { calls++; return tc.err }
			})
			require.NoError(t, err)
			var want []string
			for i := range 3 * chunk / 1000 {
				r := rec("p", i, 1000)
				_, err := f.Write(r)
				require.NoError(t, err)
				want = append(want, strings.TrimSuffix(string(r), "\n"))
				clk.Add(DefaultErrorInterval) // every report gets through the rate limit
			}
			require.NoError(t, f.Close())
			assert.Equal(t, want, readLines(t, path))
			assert.Equal(t, tc.wantCalls, calls, "preallocation attempts")
			all := errs.All()
			require.Len(t, all, tc.wantCalls, "each failure is reported")
			for _, e := range all {
				assert.ErrorIs(t, e, tc.err)
				assert.ErrorContains(t, e, tc.wantMsg)
			}
		})
	}
}
