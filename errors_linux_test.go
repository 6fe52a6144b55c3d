package asyncbus_test

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// TestOneReportPerFailure: an output whose writes fail gives exactly one
// OnError report per failure, with one prefix, and the records are counted
// as Failed.
func TestOneReportPerFailure(t *testing.T) {
	cases := []struct {
		name  string
		open  func(t *testing.T) *os.File
		errno syscall.Errno
	}{
		{"/dev/full", func(t *testing.T) *os.File {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			require.NoError(t, err, "/dev/full is part of every Linux system")
			return f
		}, syscall.ENOSPC},
		{"file opened read-only", func(t *testing.T) *os.File {
			path := filepath.Join(t.TempDir(), "ro.log")
			require.NoError(t, os.WriteFile(path, nil, 0o644))
			f, err := os.Open(path)
			require.NoError(t, err)
			return f
		}, syscall.EBADF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.open(t)
			defer out.Close()
			var mu sync.Mutex
			var reports []error
			h := asyncbus.NewHandler(out, &asyncbus.Options{OnError: func(err error) {
				mu.Lock()
				reports = append(reports, err)
				mu.Unlock()
			}})
			l := slog.New(h)
			const n = 5
			for i := range n {
				l.Info("lost", "i", i)
			}
			err := h.Flush()
			require.ErrorIs(t, err, tc.errno, "Flush reports the failed records")
			closeErr := h.Close()
			require.ErrorIs(t, closeErr, tc.errno, "Close reports the failure Flush reported: its error is the run's")
			assert.Equal(t, "asyncbus: write "+out.Name()+": "+tc.errno.Error()+" (5 records failed)", closeErr.Error())

			mu.Lock()
			defer mu.Unlock()
			require.Len(t, reports, 1, "one report for the failure: %v", reports)
			assert.Equal(t, "asyncbus: write "+out.Name()+": "+tc.errno.Error(), reports[0].Error())
			assert.ErrorIs(t, reports[0], tc.errno)
			st := h.Stats()
			assert.EqualValues(t, n, st.Failed)
			assert.Zero(t, st.Written)
		})
	}
}

// TestOneReportPerFailure's promise (one failure, one report) for a socket
// output: a net.Conn is a syscall.Conn, so the drainer writes it with
// writev and reports the bare errno.
func TestOneReportPerFailureSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Close(fds[1])) // the reader is gone: writes fail with EPIPE
	f := os.NewFile(uintptr(fds[0]), "socket")
	conn, err := net.FileConn(f)
	require.NoError(t, err)
	f.Close()
	defer conn.Close()
	var mu sync.Mutex
	var reports []error
	h := asyncbus.NewHandler(conn, &asyncbus.Options{OnError: func(err error) {
		mu.Lock()
		reports = append(reports, err)
		mu.Unlock()
	}})
	l := slog.New(h)
	for i := range 5 {
		l.Info("lost", "i", i)
	}
	require.ErrorIs(t, h.Flush(), syscall.EPIPE)
	require.ErrorIs(t, h.Close(), syscall.EPIPE, "and so does Close")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1, "one report for the failure: %v", reports)
	assert.ErrorIs(t, reports[0], syscall.EPIPE)
}
