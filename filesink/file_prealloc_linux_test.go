//go:build linux

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

// Tests of preallocation with the real fallocate(2) (Linux only: elsewhere
// preallocate is unsupported, see TestPreallocateFailures): reserving
// space, and releasing the reserve at rotation and Close.

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
