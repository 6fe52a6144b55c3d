package filesink

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of file.go's preallocation (Options.Preallocate): reserving space,
// handling failures, and releasing the reserve at rotation and Close.

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
