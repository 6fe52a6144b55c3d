package filesink

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the one-File-per-path lock (file.go's openCurrent and lockFile)
// that hold for every lock implementation. Those that need a second File in
// the same process to conflict (flock) are in lock_flock_test.go; the
// cross-process one is in lock_process_test.go.

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
				f.lock = func(handle) error { return tc.lockErr }
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
