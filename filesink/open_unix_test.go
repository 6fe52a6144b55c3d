//go:build unix

package filesink

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of open.go's modes (Unix permission bits; on Windows a mode is only
// read-only or not): new files and directories are the owner's only by
// default, a wider mode is one option away, and an existing file's mode
// (an administrator's chmod) lasts across rotation.
func TestFileAndDirectoryModes(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, whatever the test runner's
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tc := range []struct {
		name          string
		opts          Options
		chmod         os.FileMode // applied to the file after Open, 0: none
		wantFile      os.FileMode
		wantDir       os.FileMode
		wantAfterRoll os.FileMode
	}{
		{"defaults: owner only", Options{}, 0, 0o600, 0o700, 0o600},
		{"wider, one option away", Options{Perm: 0o640, DirPerm: 0o750}, 0, 0o640, 0o750, 0o640},
		{"umask applies", Options{Perm: 0o666, DirPerm: 0o777}, 0, 0o644, 0o755, 0o644},
		{"a chmod lasts across rotation", Options{}, 0o640, 0o640, 0o700, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			path := filepath.Join(dir, "app.log")
			f, err := Open(path, tc.opts)
			require.NoError(t, err)
			if tc.chmod != 0 {
				require.NoError(t, os.Chmod(path, tc.chmod)) // while the File has it open
			}
			_, err = f.Write([]byte("one\n"))
			require.NoError(t, err)
			assert.Equal(t, tc.wantFile, mode(t, path), "file")
			assert.Equal(t, tc.wantDir, mode(t, dir), "directory")
			require.NoError(t, f.Rotate())
			_, err = f.Write([]byte("two\n"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			assert.Equal(t, tc.wantAfterRoll, mode(t, path), "the file after rotation")
			backups := backupFiles(t, dir, "app-")
			require.Len(t, backups, 1)
			assert.Equal(t, tc.wantFile, mode(t, backups[0]), "the backup keeps its mode")
		})
	}
}

func mode(t *testing.T, name string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	require.NoError(t, err)
	return fi.Mode().Perm()
}
