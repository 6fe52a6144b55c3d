package filesink

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of file.go's preallocation (Options.Preallocate): reserving space,
// handling failures, and releasing the reserve at rotation and Close.

// A preallocation error disables preallocation only when the file system
// cannot preallocate at all; running out of space is reported and tried
// again at the next chunk (not at every write). Writing goes on either way.
func TestPreallocateFailures(t *testing.T) {
	const chunk = 4096
	type testCase struct {
		name      string
		err       error
		wantCalls int // for 3 chunks' worth of 1000-byte records
		wantMsg   string
	}
	cases := []testCase{{"out of space", syscall.ENOSPC, 3, "retried at the next chunk"}}
	for _, err := range preallocUnsupportedErrs { // this system's "cannot preallocate" answers
		cases = append(cases, testCase{err.Error(), err, 1, "disabled from now on"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			var errs errSink
			clk := newClock(t0)
			calls := 0
			f, err := open(path, Options{Preallocate: chunk, OnError: errs.On, Clock: clk.Now}, func(f *File) {
				f.allocate = func(handle, int64, int64) error { calls++; return tc.err }
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
