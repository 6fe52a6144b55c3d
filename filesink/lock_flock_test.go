//go:build unix && !aix

package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the one-File-per-path lock that open a second File in this
// process: they need lock_flock.go's flock(2), whose lock belongs to the
// open file description. AIX's fcntl lock (lock_aix.go) belongs to the
// process and does not detect a second File in it.

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
