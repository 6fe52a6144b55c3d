//go:build !plan9

package bus

import (
	"context"
	"fmt"
	"io/fs"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/syncerr"
)

// syncErrSink is a Syncer whose Sync fails as os.File.Sync does, with err.
type syncErrSink struct {
	batchSink
	err error
}

func (s *syncErrSink) Sync() error { return s.err }

// TestCloseIgnoresNotSyncable: Close, Flush and OnError treat
// this platform's "cannot sync this kind of file" answers as success, and
// a real sync failure as a failure. Before the fix only EINVAL passed, so
// a macOS terminal (ENOTTY) made Close fail.
func TestCloseIgnoresNotSyncable(t *testing.T) {
	type tc struct {
		name    string
		errno   uintptr
		failure bool
	}
	var tests []tc
	for _, n := range syncerr.Errnos(runtime.GOOS) {
		tests = append(tests, tc{fmt.Sprintf("errno %d", n), n, false})
	}
	tests = append(tests, tc{"EIO", uintptr(syscall.EIO), true})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports []error
			s := &syncErrSink{err: &fs.PathError{Op: "sync", Path: "/dev/stdout", Err: syscall.Errno(tt.errno)}}
			b := newTestBus(t, s, Config{OnError: func(err error) { reports = append(reports, err) }}, fastRetry)
			require.NoError(t, b.Enqueue([]byte("line\n")))
			flushErr := b.Flush(context.Background())
			closeErr := b.Close(context.Background())
			assert.Len(t, s.records(), 1)
			if tt.failure {
				assert.ErrorIs(t, flushErr, syscall.Errno(tt.errno))
				assert.ErrorIs(t, closeErr, syscall.Errno(tt.errno))
				assert.NotEmpty(t, reports)
				return
			}
			assert.NoError(t, flushErr)
			assert.NoError(t, closeErr)
			assert.Empty(t, reports)
		})
	}
}
