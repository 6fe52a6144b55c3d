package filesink

// Regression tests for bugs found in review.

import (
	"bytes"
	"errors"
	"fmt"
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

// After logrotate's copytruncate, with preallocation, Close trims to the
// real end of the file, never past it (no zero bytes appear).
func TestCopytruncateThenCloseNeverZeroExtends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{Preallocate: 1 << 20})
	require.NoError(t, err)
	_, err = f.Write([]byte(strings.Repeat("x", 99) + "\n"))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 0)) // logrotate copytruncate
	_, err = f.Write([]byte("after\n"))      // within CheckInterval (1s default)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.False(t, bytes.Contains(b, []byte{0}), "file has %d bytes incl. NULs: %q", len(b), b)
}

// After copytruncate, cutting back a torn record removes exactly its bytes
// and never extends the file with zeros.
func TestCopytruncateThenCutBackNeverZeroExtends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w := &failingWriter{failures: 0, keep: 3, errno: syscall.ENOSPC}
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
	require.NoError(t, err)
	_, err = f.Write([]byte(strings.Repeat("x", 99) + "\n"))
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 0))
	w.mu.Lock()
	w.failures = 2 // the write and its completion attempt fail part-way
	w.mu.Unlock()
	_, err = f.Write([]byte("0123456789\n"))
	require.Error(t, err)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.False(t, bytes.Contains(b, []byte{0}), "file has %d bytes incl. NULs: %q", len(b), b)
}

// Rotate while a cut back is pending applies the cut first, so the backup
// never ends in a torn record.
func TestRotateAppliesPendingCutBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	w := &failingWriter{failures: 0, keep: 5, errno: syscall.EIO}
	tr := &flakyTruncate{err: errors.New("truncate failed")}
	f, err := open(path, Options{OnError: func(error) {}}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	_, err = f.Write([]byte("whole\n"))
	require.NoError(t, err)
	w.mu.Lock()
	w.failures = 2
	w.mu.Unlock()
	tr.failNext(1)
	_, err = f.Write([]byte("0123456789\n"))
	require.Error(t, err)
	require.NoError(t, f.Rotate())
	require.NoError(t, f.Close())
	bs := backupFiles(t, dir, "app-")
	require.Len(t, bs, 1)
	b, err := os.ReadFile(bs[0])
	require.NoError(t, err)
	require.Equal(t, "whole\n", string(b), "backup holds a torn record")
}

// Many empty records ahead of a real one are not mistaken for a write that
// made no progress.
func TestManyEmptyRecordsAreNotAShortWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := Open(path, Options{})
	require.NoError(t, err)
	recs := make([][]byte, 3*iovMax+1)
	for i := range recs {
		recs[i] = []byte{}
	}
	recs[len(recs)-1] = []byte("real\n")
	n, err := f.WriteBatch(recs)
	require.NoError(t, f.Close())
	require.NoError(t, err, "written=%d", n)
	require.Equal(t, len(recs), n)
}

// TestSymlinkEqualToPathIsRejected: a Symlink naming the log file itself
// would replace the log with a link to itself.
func TestSymlinkEqualToPathIsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	_, err := Open(path, Options{Symlink: path})
	require.ErrorContains(t, err, "is the log file itself")
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

// flakyRename fails while failing is set (an immutable or read-only
// directory: EACCES/EPERM from rename(2)), then renames.
type flakyRename struct {
	mu      sync.Mutex
	failing bool
	calls   int
}

func (fr *flakyRename) rename(oldpath, newpath string) error {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.calls++
	if fr.failing {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EACCES}
	}
	return os.Rename(oldpath, newpath)
}

// Issue 13 item 8: a rotation whose rename fails keeps appending to the
// current file (nothing fails), reports once, and rotates at the next size
// trigger once renaming works again.
func TestRotationRenameFailureKeepsWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	fr := &flakyRename{failing: true}
	var errs errSink
	clk := newClock(t0)
	const maxSize = 4096
	f, err := open(path, Options{MaxSize: maxSize, OnError: errs.On, Clock: clk.Now, UTC: true},
		func(f *File) { f.rename = fr.rename })
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

// The torn-tail report is held until the File's first use, so a durable
// ring that writes the torn record again first can say so (SettleTornTail):
// then nothing is reported and the side file goes; otherwise it is reported
// exactly once.
func TestTornTailReportSettledOnce(t *testing.T) {
	whole := []byte(`{"msg":"wörk","seq":7}` + "\n")
	for _, tc := range []struct {
		name     string
		settle   []byte
		replayed bool
	}{
		{"replay covers it", whole, true},
		{"replay is another record", []byte(`{"msg":"other"}` + "\n"), false},
		{"no replay", nil, false},
		{"first use is a write", []byte("unused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			require.NoError(t, os.WriteFile(path, append([]byte("ok\n"), whole[:9]...), 0o644))
			var errs errSink
			f, err := Open(path, Options{OnError: errs.On})
			require.NoError(t, err)
			assert.Empty(t, errs.All(), "held until the first use")
			side := f.Repaired().SideFile
			if tc.name == "first use is a write" {
				_, err = f.Write([]byte("x\n"))
				require.NoError(t, err)
			}
			f.SettleTornTail(tc.settle)
			f.SettleTornTail(nil) // only the first call counts
			_, err = f.Write(whole)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, tc.replayed, f.Repaired().Replayed)
			if tc.replayed {
				assert.Empty(t, errs.All())
				assert.NoFileExists(t, side)
				return
			}
			require.Len(t, errs.All(), 1)
			var tr *TailRepair
			require.ErrorAs(t, errs.All()[0], &tr)
			assert.FileExists(t, side)
		})
	}
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
					f.datasync = func(int) error { return tc.syncErr }
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

// A cut back that failed stays pending; if logrotate's copytruncate then
// empties the file, applying the pending cut must not extend the file with
// zero bytes, whichever call applies it: the next write (before or after the
// path check notices the truncation), a rotation or Close.
func TestPendingCutAfterCopytruncateNeverZeroExtends(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(t *testing.T, f *File, clk *fakeClock)
		want string
	}{
		{"write after the path check", func(t *testing.T, f *File, clk *fakeClock) {
			clk.Add(DefaultCheckInterval)
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, "after\n"},
		{"write before the path check", func(t *testing.T, f *File, _ *fakeClock) {
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, "after\n"},
		{"rotate", func(t *testing.T, f *File, _ *fakeClock) {
			require.NoError(t, f.Rotate())
		}, ""},
		{"close", func(*testing.T, *File, *fakeClock) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			w := &failingWriter{}
			tr := &flakyTruncate{err: errors.New("truncate failed")}
			clk := newClock(t0)
			f, err := open(path, Options{OnError: func(error) {}, Clock: clk.Now}, func(f *File) {
				f.writev = w.writev
				f.truncate = tr.truncate
			})
			require.NoError(t, err)
			for i := range 100 {
				_, err := f.Write(rec("r", i, 100))
				require.NoError(t, err)
			}
			// A write fails part-way, the completion fails, and so does the cut back.
			w.mu.Lock()
			w.failures, w.keep, w.errno = 2, 5, syscall.EIO
			w.mu.Unlock()
			tr.failNext(1)
			_, err = f.Write([]byte("0123456789\n"))
			require.Error(t, err)
			require.NoError(t, os.Truncate(path, 0)) // copytruncate: copied away, emptied

			tc.next(t, f, clk)
			require.NoError(t, f.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b), "no zero bytes, nothing but the records written since")
			assert.Empty(t, backupFiles(t, dir, "app-"), "an empty file is not rotated")
		})
	}
}

// writeStep is one scripted writev: it stores the first keep bytes, runs
// after (another program appending, say) and returns err.
type writeStep struct {
	keep  int
	err   error
	after func()
}

// scriptedWrites plays its steps on the next writev calls, then writes
// normally.
type scriptedWrites struct {
	mu    sync.Mutex
	steps []writeStep
}

func (s *scriptedWrites) writev(fd int, iovs [][]byte) (int, error) {
	s.mu.Lock()
	if len(s.steps) == 0 {
		s.mu.Unlock()
		return writevFD(fd, iovs)
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	var part [][]byte
	for keep := st.keep; keep > 0 && len(iovs) > 0; iovs = iovs[1:] {
		k := min(keep, len(iovs[0]))
		part = append(part, iovs[0][:k])
		keep -= k
	}
	n, err := writevFD(fd, part)
	if err != nil {
		return n, err
	}
	if st.after != nil {
		st.after()
	}
	return n, st.err
}

func (s *scriptedWrites) play(steps ...writeStep) {
	s.mu.Lock()
	s.steps = steps
	s.mu.Unlock()
}

// A write that fails part-way is cut back only while its torn bytes are the
// last ones in the file. Another program appending to the log (echo >>
// app.log; a second filesink.File cannot, see ErrLocked) after those bytes
// keeps its bytes: the fragment stays and the error says why. Appends
// before the write, or copytruncate, do not stop the cut.
func TestCutBackSparesBytesAppendedByAnotherWriter(t *testing.T) {
	const other = "other-program-line\n"
	const mine = "my-record-0123456789\n"
	for _, tc := range []struct {
		name    string
		steps   func(appendOther func()) []writeStep
		before  func(t *testing.T, path string) // runs before the write
		want    string
		wantErr string // "" when the write's error is only the write failure
	}{
		{
			name: "appended between the fragment and the cut",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC, after: appendOther}, {keep: 0, err: syscall.ENOSPC}}
			},
			want:    mine[:5] + other,
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended between two parts of the record",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, after: appendOther}, {keep: 3, err: syscall.ENOSPC}, {keep: 0, err: syscall.ENOSPC}}
			},
			want:    mine[:5] + other + mine[5:8],
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended after the completion attempt",
			steps: func(appendOther func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 4, err: syscall.ENOSPC, after: appendOther}}
			},
			want:    mine[:9] + other,
			wantErr: "could not be removed because the file grew underneath",
		},
		{
			name: "appended before the write",
			steps: func(func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 0, err: syscall.ENOSPC}}
			},
			before: func(t *testing.T, path string) { appendTo(t, path, other) },
			want:   "earlier\n" + other,
		},
		{
			name: "copytruncate before the write",
			steps: func(func()) []writeStep {
				return []writeStep{{keep: 5, err: syscall.ENOSPC}, {keep: 2, err: syscall.ENOSPC}}
			},
			before: func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) },
			want:   "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			var w scriptedWrites
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			if tc.before != nil {
				_, err = f.Write([]byte("earlier\n"))
				require.NoError(t, err)
				tc.before(t, path)
			}
			w.play(tc.steps(func() { appendTo(t, path, other) })...)
			n, err := f.Write([]byte(mine))
			assert.Zero(t, n)
			require.ErrorIs(t, err, syscall.ENOSPC)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			} else {
				assert.NotContains(t, err.Error(), "grew underneath")
			}
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// A pending cut back (the truncation failed) is dropped, not applied, if
// another program appended after the torn bytes meanwhile: the other
// program's line stays whole, OnError says so, and writing goes on.
func TestPendingCutSparesBytesAppendedByAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	var w scriptedWrites
	tr := &flakyTruncate{err: errors.New("truncate failed")}
	var errs errSink
	f, err := open(path, Options{OnError: errs.On}, func(f *File) {
		f.writev = w.writev
		f.truncate = tr.truncate
	})
	require.NoError(t, err)
	w.play(writeStep{keep: 4, err: syscall.EIO}, writeStep{keep: 0, err: syscall.EIO})
	tr.failNext(1)
	_, err = f.Write([]byte("torn-record\n"))
	require.ErrorIs(t, err, syscall.EIO)
	appendTo(t, path, "other\n")
	_, err = f.Write([]byte("next\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "tornother\nnext\n", string(got))
	all := errs.All()
	require.Len(t, all, 1)
	assert.ErrorContains(t, all[0], "could not be removed because the file grew underneath")
	assert.ErrorContains(t, all[0], path)
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

// Write is all or nothing even on error: n is 0 and nothing of p is in the
// file, or n is len(p) and all of p is (the write failed part-way and its
// completion succeeded; the error is still returned).
func TestWriteErrorIsAllOrNothing(t *testing.T) {
	p := []byte("0123456789\n")
	for _, tc := range []struct {
		name     string
		failures int // the write, then the attempt to complete it
		keep     int
		wantN    int
		want     string
	}{
		{"fails part-way, completed", 1, 5, len(p), string(p)},
		{"fails part-way, completion fails too", 2, 5, 0, ""},
		{"fails with nothing written", 1, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			w := &failingWriter{failures: tc.failures, keep: tc.keep, errno: syscall.ENOSPC}
			f, err := open(path, Options{OnError: func(error) {}}, func(f *File) { f.writev = w.writev })
			require.NoError(t, err)
			n, err := f.Write(p)
			require.ErrorIs(t, err, syscall.ENOSPC, "the error is returned either way")
			assert.Equal(t, tc.wantN, n)
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

// One File per path: a second Open while a File has the path open fails with
// ErrLocked, naming the path, and leaves the file alone: the repair does not
// cut a record the other File is still writing (here its first bytes are in
// the file, the rest to come). Once the first File is closed, Open works and
// repairs what is torn.
func TestSecondOpenOfAPathFailsWithErrLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	first, err := Open(path, Options{})
	require.NoError(t, err)
	_, err = first.Write([]byte("whole\n"))
	require.NoError(t, err)
	appendTo(t, path, "half-writ") // a record the first File is in the middle of

	var errs errSink
	second, err := Open(path, Options{OnError: errs.On})
	require.ErrorIs(t, err, ErrLocked)
	assert.Nil(t, second)
	assert.ErrorContains(t, err, path)
	assert.ErrorContains(t, err, "another File, in this or another process, has it open")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "whole\nhalf-writ", string(got), "the file is untouched")
	side, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	assert.Empty(t, side, "no repair")
	assert.Empty(t, errs.All())

	require.NoError(t, first.Close())
	second, err = Open(path, Options{OnError: errs.On})
	require.NoError(t, err, "the lock goes with Close")
	require.NotNil(t, second.Repaired())
	require.NoError(t, second.Close())
	assert.Equal(t, []string{"whole"}, readLines(t, path))
}

// The audit's scenario: while a File writes large batches, repeated Opens of
// its path all fail with ErrLocked, and every line it wrote is in the file.
func TestOpenWhileAnotherFileWritesLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	w, err := Open(path, Options{})
	require.NoError(t, err)
	const perBatch = 2000 // 100-byte lines: 200 kB per WriteBatch
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		written := 0
		batch := make([][]byte, perBatch)
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- written
				return
			default:
			}
			for j := range batch {
				batch[j] = rec(fmt.Sprintf("c%04d", i), j, 100)
			}
			n, err := w.WriteBatch(batch)
			written += n
			if err != nil {
				done <- written
				return
			}
		}
	}()
	for range 50 {
		f, err := Open(path, Options{OnError: func(error) {}})
		if !assert.ErrorIs(t, err, ErrLocked) {
			require.NoError(t, f.Close())
		}
	}
	close(stop)
	written := <-done
	require.NoError(t, w.Close())
	assert.Len(t, readLines(t, path), written, "every line written is in the file, whole")
}

// Each file a File opens is locked: the first, the new one after a rotation
// (by size or by Rotate) and the one reopened after logrotate renamed or
// deleted the path.
func TestEveryFileAFileOpensIsLocked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		act   func(t *testing.T, f *File, path string, clk *fakeClock)
		files int // the log and its backups afterwards
	}{
		{"open", func(*testing.T, *File, string, *fakeClock) {}, 1},
		{"rotation by size", func(t *testing.T, f *File, _ string, _ *fakeClock) {
			_, err := f.Write(rec("s", 1, 100)) // over MaxSize: rotates first
			require.NoError(t, err)
		}, 2},
		{"Rotate", func(t *testing.T, f *File, _ string, clk *fakeClock) {
			clk.Add(time.Second) // a backup name of its own
			require.NoError(t, f.Rotate())
		}, 2},
		{"reopen after rename", func(t *testing.T, f *File, path string, clk *fakeClock) {
			require.NoError(t, os.Rename(path, path+".1"))
			clk.Add(DefaultCheckInterval)
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, 2},
		{"reopen after delete", func(t *testing.T, f *File, path string, clk *fakeClock) {
			require.NoError(t, os.Remove(path))
			clk.Add(DefaultCheckInterval)
			_, err := f.Write([]byte("after\n"))
			require.NoError(t, err)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			clk := newClock(t0)
			f, err := Open(path, Options{MaxSize: 150, Clock: clk.Now, UTC: true})
			require.NoError(t, err)
			_, err = f.Write(rec("s", 0, 100))
			require.NoError(t, err)
			tc.act(t, f, path, clk)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, tc.files)
			_, err = Open(path, Options{OnError: func(error) {}})
			require.ErrorIs(t, err, ErrLocked)
			require.NoError(t, f.Close())
			g, err := Open(path, Options{OnError: func(error) {}})
			require.NoError(t, err)
			require.NoError(t, g.Close())
		})
	}
}

// A File that must reopen its path (logrotate moved the file) and finds it
// locked by another File returns ErrLocked and writes nothing, neither to the
// other's file nor to its old one; once the other File is closed, the retry
// (the bus's) succeeds.
func TestReopenOfALockedPathWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	clk := newClock(t0)
	var errs errSink
	a, err := Open(path, Options{Clock: clk.Now, OnError: errs.On})
	require.NoError(t, err)
	_, err = a.Write([]byte("a1\n"))
	require.NoError(t, err)
	require.NoError(t, os.Rename(path, path+".1")) // logrotate
	b, err := Open(path, Options{})                // e.g. the new instance of a restarted service
	require.NoError(t, err)
	_, err = b.Write([]byte("b1\n"))
	require.NoError(t, err)

	clk.Add(DefaultCheckInterval)
	n, err := a.Write([]byte("a2\n"))
	require.ErrorIs(t, err, ErrLocked)
	assert.Zero(t, n)
	assert.Equal(t, []string{"b1"}, readLines(t, path))
	assert.Equal(t, []string{"a1"}, readLines(t, path+".1"))
	require.NotEmpty(t, errs.All(), "the failed reopen is reported")
	assert.ErrorIs(t, errs.All()[0], ErrLocked)

	require.NoError(t, b.Close())
	n, err = a.Write([]byte("a2\n"))
	require.NoError(t, err, "the retry opens the path once it is free")
	assert.Equal(t, 3, n)
	require.NoError(t, a.Close())
	assert.Equal(t, []string{"b1", "a2"}, readLines(t, path))
}

// How Open treats the answer of the lock call: held elsewhere is ErrLocked;
// a file system without locks is used unlocked and reported once (not again
// at a rotation); any other error fails Open.
func TestOpenLockErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		lockErr     error
		wantOpenErr error // nil: Open succeeds
		wantReports int
	}{
		{"locked", nil, nil, 0},
		{"held elsewhere", errLockHeld, ErrLocked, 0},
		{"no locks on this file system", syscall.ENOLCK, nil, 1},
		{"not supported", syscall.EOPNOTSUPP, nil, 1},
		{"other error", syscall.EIO, syscall.EIO, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			var errs errSink
			clk := newClock(t0)
			f, err := open(path, Options{OnError: errs.On, Clock: clk.Now, UTC: true}, func(f *File) {
				f.lock = func(int) error { return tc.lockErr }
			})
			if tc.wantOpenErr != nil {
				require.ErrorIs(t, err, tc.wantOpenErr)
				assert.ErrorContains(t, err, path)
				assert.Empty(t, errs.All())
				return
			}
			require.NoError(t, err)
			_, err = f.Write([]byte("a\n"))
			require.NoError(t, err)
			clk.Add(time.Hour) // past the rate limit, and a backup name of its own
			require.NoError(t, f.Rotate())
			_, err = f.Write([]byte("b\n"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, []string{"b"}, readLines(t, path))
			all := errs.All()
			require.Len(t, all, tc.wantReports)
			for _, e := range all {
				assert.ErrorIs(t, e, tc.lockErr)
				assert.ErrorContains(t, e, "will not be detected")
			}
		})
	}
}

// The lock is taken on the inode opened; if the path is renamed away between
// the open and the lock (another File rotating it), Open starts over on the
// new path instead of writing into the other's backup, a bounded number of
// times.
func TestOpenRetriesWhenThePathIsReplacedWhileLocking(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replaced int // opens after which the path is renamed away
		wantErr  bool
	}{
		{"replaced once", 1, false},
		{"replaced every time", maxOpenAttempts, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			opens := 0
			f, err := open(path, Options{}, func(f *File) {
				f.openFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
					file, err := os.OpenFile(name, flag, perm)
					if opens++; err == nil && opens <= tc.replaced {
						require.NoError(t, os.Rename(name, fmt.Sprintf("%s.other%d", name, opens)))
					}
					return file, err
				}
			})
			if tc.wantErr {
				require.ErrorContains(t, err, "keeps being replaced")
				assert.Equal(t, maxOpenAttempts, opens)
				return
			}
			require.NoError(t, err)
			_, err = f.Write([]byte("mine\n"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, []string{"mine"}, readLines(t, path))
			assert.Empty(t, readLines(t, path+".other1"), "nothing in the renamed file")
		})
	}
}

// With Preallocate, Close and rotation release the reserved space by
// truncating to the file's real end, not the File's own count of what it
// wrote: a line another program appended in between stays (it was cut,
// with the File's last records, before).
func TestPreallocReleaseKeepsBytesAppendedByAnotherProgram(t *testing.T) {
	for _, act := range []string{"Close", "Rotate"} {
		t.Run(act, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			var errs errSink
			f, err := Open(path, Options{Preallocate: 1 << 20, OnError: errs.On})
			require.NoError(t, err)
			_, err = f.Write([]byte("mine-1\n"))
			require.NoError(t, err)
			appendTo(t, path, "other-program-line\n")
			_, err = f.Write([]byte("mine-2\n"))
			require.NoError(t, err)
			file := path
			if act == "Rotate" {
				require.NoError(t, f.Rotate())
				b := backupFiles(t, filepath.Dir(path), "app-")
				require.Len(t, b, 1)
				file = b[0]
			}
			require.NoError(t, f.Close())
			assert.Empty(t, errs.All(), "nothing reported")
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, "mine-1\nother-program-line\nmine-2\n", string(got))
		})
	}
}
