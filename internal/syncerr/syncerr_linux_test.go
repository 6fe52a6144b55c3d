package syncerr

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotSyncableRealFiles: what this kernel answers to os.File.Sync on a
// pipe, a socket, a terminal and /dev/null is either success or an error
// NotSyncable recognises, and the Linux row names the syscall package's
// own values.
func TestNotSyncableRealFiles(t *testing.T) {
	assert.Equal(t, []uintptr{uintptr(syscall.EINVAL), uintptr(syscall.EROFS), uintptr(syscall.EOPNOTSUPP)}, notSyncableErrnos["linux"])
	tests := []struct {
		name string
		open func(t *testing.T) *os.File
	}{
		{"pipe", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			return w
		}},
		{"socket", func(t *testing.T) *os.File {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			require.NoError(t, err)
			t.Cleanup(func() { _ = syscall.Close(fds[1]) })
			return os.NewFile(uintptr(fds[0]), "socket")
		}},
		{"terminal", func(t *testing.T) *os.File {
			f, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
			require.NoError(t, err, "/dev/ptmx is part of every Linux system")
			return f
		}},
		{"/dev/null", func(t *testing.T) *os.File {
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			require.NoError(t, err)
			return f
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.open(t)
			defer f.Close()
			err := f.Sync()
			assert.True(t, err == nil || NotSyncable(err), "%v", err)
		})
	}
}
