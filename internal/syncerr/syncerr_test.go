//go:build !plan9

package syncerr

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNotSyncableOnEveryPlatform: the errors with which each
// platform refuses to sync a terminal, a pipe, a console or a socket are
// not failures, wrapped as os.File.Sync wraps them; real failures (EIO,
// a closed descriptor, a full disk) stay failures. The values are each
// platform's own numbers, so every row runs here.
func TestNotSyncableOnEveryPlatform(t *testing.T) {
	tests := []struct {
		goos     string
		ignored  map[string]uintptr // name: number on goos
		failures map[string]uintptr
		why      string // what answers so
	}{
		{"linux", map[string]uintptr{"EINVAL": 22, "EROFS": 30, "EOPNOTSUPP": 95}, map[string]uintptr{"EIO": 5, "EBADF": 9, "ENOSPC": 28, "ENOTTY": 25}, "pipes, sockets, terminals"},
		{"android", map[string]uintptr{"EINVAL": 22, "EROFS": 30}, map[string]uintptr{"EIO": 5, "EBADF": 9}, "as Linux"},
		{"darwin", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "ENOTSUP": 45, "EOPNOTSUPP": 102}, map[string]uintptr{"EIO": 5, "EBADF": 9, "ENOSPC": 28}, "a terminal answers ENOTTY (uber-go/zap#880), a pipe ENOTSUP"},
		{"ios", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "ENOTSUP": 45}, map[string]uintptr{"EIO": 5}, "as macOS"},
		{"freebsd", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "EOPNOTSUPP": 45}, map[string]uintptr{"EIO": 5, "EBADF": 9}, "BSD"},
		{"dragonfly", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "EOPNOTSUPP": 45}, map[string]uintptr{"EIO": 5}, "BSD"},
		{"netbsd", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "EOPNOTSUPP": 45, "ENOTSUP": 86}, map[string]uintptr{"EIO": 5}, "BSD"},
		{"openbsd", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "EOPNOTSUPP": 45, "ENOTSUP": 91}, map[string]uintptr{"EIO": 5}, "BSD"},
		{"solaris", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "ENOTSUP": 48, "EOPNOTSUPP": 122}, map[string]uintptr{"EIO": 5}, "System V"},
		{"illumos", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "ENOTSUP": 48}, map[string]uintptr{"EIO": 5}, "System V"},
		{"aix", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25, "ENOTSUP": 124, "EOPNOTSUPP": 64}, map[string]uintptr{"EIO": 5}, "System V"},
		{"windows", map[string]uintptr{"ERROR_INVALID_FUNCTION": 1, "ERROR_INVALID_HANDLE": 6, "ERROR_NOT_SUPPORTED": 50}, map[string]uintptr{"ERROR_WRITE_FAULT": 29, "ERROR_DISK_FULL": 112, "ERROR_ACCESS_DENIED": 5}, "the NUL device, a console"},
		{"wasip1", map[string]uintptr{"EINVAL": 28, "ENOTSUP": 58}, map[string]uintptr{"EIO": 29, "EBADF": 8}, "WASI numbers"},
		{"js", map[string]uintptr{"EINVAL": 22, "ENOTTY": 25}, map[string]uintptr{"EIO": 5}, "Node's numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			for name, n := range tt.ignored {
				err := &fs.PathError{Op: "sync", Path: "/dev/stdout", Err: syscall.Errno(n)}
				assert.True(t, NotSyncableOn(tt.goos, err), "%s: %s (%d) means the file cannot be synced: %s", tt.goos, name, n, tt.why)
				assert.True(t, NotSyncableOn(tt.goos, fmt.Errorf("sink: %w", err)), "%s: %s wrapped again", tt.goos, name)
			}
			for name, n := range tt.failures {
				err := &fs.PathError{Op: "sync", Path: "/var/log/app.log", Err: syscall.Errno(n)}
				assert.False(t, NotSyncableOn(tt.goos, err), "%s: %s (%d) is a failure", tt.goos, name, n)
			}
		})
	}
	assert.False(t, NotSyncableOn("linux", nil))
	assert.False(t, NotSyncableOn("linux", errors.New("sync: no errno")))
	assert.True(t, NotSyncableOn("linux", fmt.Errorf("sink: %w", errors.ErrUnsupported)), "a sink's own ErrUnsupported")
}
