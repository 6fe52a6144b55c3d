package filesink

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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

// Tests of file.go: Open and its checks, Close, writing, reopening after
// logrotate, syncing and the OnError rate limit. The write path's failures
// (torn records, cut back) are in file_write_test.go, preallocation in
// file_prealloc_test.go, the one-File-per-path lock in lock_test.go.

func TestOpenCreatesDirectoriesAndAppends(t *testing.T) {
	for _, tc := range []struct {
		name string
		perm os.FileMode
	}{
		{"default perm", 0},
		{"custom perm", 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a", "b", "app.log")
			f, err := Open(path, Options{Perm: tc.perm})
			require.NoError(t, err)
			n, err := f.Write([]byte("one\n"))
			require.NoError(t, err)
			assert.Equal(t, 4, n)
			require.NoError(t, f.Close())
			require.NoError(t, f.Close(), "Close is idempotent")

			f, err = Open(path, Options{Perm: tc.perm})
			require.NoError(t, err)
			w, err := f.WriteBatch([][]byte{[]byte("two\n"), []byte("three\n")})
			require.NoError(t, err)
			assert.Equal(t, 2, w)
			assert.Nil(t, f.Repaired())
			require.NoError(t, f.Close())
			assert.Equal(t, []string{"one", "two", "three"}, readLines(t, path))
		})
	}
}

// TestFilePrintsItsPath: %v of a *File names the file instead
// of dumping its fields.
func TestFilePrintsItsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	assert.Equal(t, "filesink.File("+path+")", fmt.Sprintf("%v", f))
}

func TestClosedAndBadInput(t *testing.T) {
	dir := t.TempDir()
	_, err := Open("", Options{})
	require.Error(t, err)
	_, err = Open(filepath.Join(dir, "x.log"), Options{Perm: os.ModeDir | 0o644})
	require.ErrorContains(t, err, "Perm")
	_, err = Open(dir, Options{})
	require.ErrorContains(t, err, dir) // a directory cannot be opened for writing
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	_, err = Open(filepath.Join(notDir, "x.log"), Options{})
	require.ErrorContains(t, err, "create directory")

	f, err := Open(filepath.Join(dir, "x.log"), Options{})
	require.NoError(t, err)
	w, err := f.WriteBatch(nil)
	require.NoError(t, err)
	assert.Equal(t, 0, w)
	w, err = f.WriteBatch([][]byte{{}, []byte("a\n"), {}})
	require.NoError(t, err)
	assert.Equal(t, 3, w)
	require.NoError(t, f.Close())
	for name, call := range map[string]func() error{
		"Write":      func() error { _, err := f.Write([]byte("x\n")); return err },
		"WriteBatch": func() error { _, err := f.WriteBatch([][]byte{[]byte("x\n")}); return err },
		"Sync":       f.Sync,
		"Rotate":     f.Rotate,
	} {
		assert.ErrorIs(t, call(), ErrClosed, name)
	}
	assert.Equal(t, []string{"a"}, readLines(t, filepath.Join(dir, "x.log")))
}

// TestSymlinkEqualToPathIsRejected: a Symlink naming the log file itself
// would replace the log with a link to itself.
func TestSymlinkEqualToPathIsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	_, err := Open(path, Options{Symlink: path})
	require.ErrorContains(t, err, "is the log file itself")
}

func TestPermissionErrorIsClear(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	_, err := open(path, Options{}, func(f *File) {
		f.openFile = func(name string, _ int, _ os.FileMode) (*os.File, error) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.Contains(t, err.Error(), "permission denied")
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "write permission")

	if os.Geteuid() != 0 { // root ignores mode bits; the injected case above always runs
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o500))
		_, err = Open(filepath.Join(ro, "app.log"), Options{})
		assert.ErrorIs(t, err, fs.ErrPermission)
		assert.Contains(t, err.Error(), "permission denied")
	}
}

func TestWriterWithSlog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{})
	require.NoError(t, err)
	log := slog.New(slog.NewJSONHandler(f, nil))
	for i := range 10 {
		log.Info("hello", "i", i)
	}
	require.NoError(t, f.Close())
	lines := readLines(t, path)
	require.Len(t, lines, 10)
	assert.Contains(t, lines[9], `"i":9`)
}

// TestConcurrentCloseIsABarrier: every Close returns only after the first
// has finished, so no caller sees Close return while the background
// compression of a just-rotated backup is still running.
func TestConcurrentCloseIsABarrier(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(t0)
	f, err := Open(filepath.Join(dir, "app.log"), Options{Compress: true, Clock: clk.Now, UTC: true})
	require.NoError(t, err)
	_, err = f.Write([]byte(strings.Repeat("x", 1<<20) + "\n"))
	require.NoError(t, err)
	clk.Add(time.Second)
	require.NoError(t, f.Rotate())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, f.Close())
			// Whichever call this was, the compression has finished.
			files := backupFiles(t, dir, "app-")
			require.Len(t, files, 1)
			require.True(t, strings.HasSuffix(files[0], ".log.gz"), files[0])
		}()
	}
	wg.Wait()
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

// Close syncs data written since the last sync (unless the policy is
// SyncNever) and returns the sync's own error, not ErrClosed: it used to
// mark the File closed first, so the sync refused to run.
func TestCloseSyncsDirtyData(t *testing.T) {
	for _, tc := range []struct {
		name       string
		policy     SyncPolicy
		syncErr    error
		wantSyncs  int // fdatasync calls made by Close
		wantErrIs  error
		writeFirst bool
	}{
		{name: "interval, dirty", policy: SyncInterval, wantSyncs: 1, writeFirst: true},
		{name: "interval, nothing written", policy: SyncInterval, wantSyncs: 0},
		{name: "every batch, synced already", policy: SyncEveryBatch, wantSyncs: 0, writeFirst: true},
		{name: "never", policy: SyncNever, wantSyncs: 0, writeFirst: true},
		{name: "interval, sync fails", policy: SyncInterval, syncErr: syscall.EIO, wantSyncs: 1, wantErrIs: syscall.EIO, writeFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			tick := make(chan time.Time) // never ticks: only Close can sync
			f, err := open(path, Options{Sync: tc.policy, Clock: newClock(t0).Now, testTick: tick}, func(f *File) {
				if tc.syncErr != nil {
					f.datasync = func(handle) error { return tc.syncErr }
				}
			})
			require.NoError(t, err)
			if tc.writeFirst {
				_, err = f.Write([]byte("a\n"))
				require.NoError(t, err)
			}
			before := syncCount(f)
			err = f.Close()
			assert.Equal(t, before+tc.wantSyncs, syncCount(f), "fdatasync calls by Close")
			assert.NotErrorIs(t, err, ErrClosed)
			if tc.wantErrIs != nil {
				require.ErrorIs(t, err, tc.wantErrIs)
			} else {
				require.NoError(t, err)
			}
			assert.ErrorIs(t, f.Close(), tc.wantErrIs, "a second Close returns the first one's result")
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
	assert.Contains(t, errs.All()[2].Error(), "1 error was suppressed")
	assert.Empty(t, readLines(t, path))
}
