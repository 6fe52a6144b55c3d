package term

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestIsTerminal: a pseudo-terminal is a terminal; a pipe, a regular file
// and /dev/null are not.
func TestIsTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err, "open a pseudo-terminal")
	defer ptmx.Close()
	rc, err := ptmx.SyscallConn()
	require.NoError(t, err)
	var n int
	var ctlErr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		if ctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ctlErr == nil { // unlockpt
			n, ctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN) // ptsname
		}
	}))
	require.NoError(t, ctlErr)
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer pts.Close()
	assert.True(t, IsTerminal(pts), "the pseudo-terminal")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, IsTerminal(w), "a pipe")
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a file")
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, IsTerminal(null), "/dev/null")
}
