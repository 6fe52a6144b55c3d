package filesink_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/filesink"
)

// The one-File-per-path lock across processes; the other process is the
// crash child of crash_test.go.

// TestOpenFailsWhileAnotherProcessHasTheFile: one File per path across
// processes. While a child process logs into the file, Open in this one fails
// with ErrLocked and leaves the file alone (no repair of the record the child
// is writing); once the child is killed (kill -9), the kernel has dropped its
// lock and Open works.
func TestOpenFailsWhileAnotherProcessHasTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	counterPath := filepath.Join(dir, "counter")
	cmd := startCrashChild(t, path, counterPath, 1)

	for range 20 {
		f, err := filesink.Open(path, filesink.Options{OnError: func(error) {}})
		if !assert.ErrorIs(t, err, filesink.ErrLocked) {
			require.NoError(t, f.Close())
		}
	}
	side, err := filepath.Glob(path + ".torn-*")
	require.NoError(t, err)
	assert.Empty(t, side, "no repair while the child writes")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	f, err := filesink.Open(path, filesink.Options{OnError: func(error) {}})
	require.NoError(t, err, "the lock dies with the process")
	require.NoError(t, f.Close())
}
