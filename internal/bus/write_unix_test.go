//go:build unix

package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const fsizeChildEnv = "ASYNCBUS_FSIZE_CHILD"

// childResult is what the file-size-limit child reports.
type childResult struct {
	Stats
	FastFails uint64
}

// TestTornFileIsCutBack: a real *os.File whose writes
// start failing part-way through a record (RLIMIT_FSIZE in a child process,
// SIGXFSZ ignored, so writes past the limit are short and then EFBIG, as
// with a full disk). The file must hold whole records only, and exactly the
// records counted as written.
func TestTornFileIsCutBack(t *testing.T) {
	const limit, size, count = 10_000, 97, 300 // the limit falls inside record 103
	cases := []struct {
		name   string
		append bool
		writev bool
	}{
		{"append writev", true, true},
		{"no append writev", false, true},
		{"append copy", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.log")
			cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimitChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%t|%t|%d|%d|%d", fsizeChildEnv, path, tc.append, tc.writev, limit, size, count))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child: %s", out)
			var res childResult
			i := bytes.Index(out, []byte("RESULT "))
			require.GreaterOrEqual(t, i, 0, "child: %s", out)
			line, _, _ := bytes.Cut(out[i+len("RESULT "):], []byte("\n"))
			require.NoError(t, json.Unmarshal(line, &res))

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.LessOrEqual(t, len(data), limit)
			lines := splitLines(data)
			for i, l := range lines {
				_, s, err := parseRec(l)
				require.NoError(t, err, "line %d: no torn line", i)
				require.Equal(t, i, s, "in order, once")
			}
			require.EqualValues(t, len(lines), res.Written, "written == whole lines in the file")
			require.EqualValues(t, len(lines)*size, res.WrittenBytes)
			require.EqualValues(t, count, res.Written+res.Failed)
			require.EqualValues(t, count, res.Enqueued)
			require.Equal(t, limit/size, len(lines), "every record that fits is there")
		})
	}
}

// TestFileSizeLimitChild is the child of TestTornFileIsCutBack; it does
// nothing unless started by it.
func TestFileSizeLimitChild(t *testing.T) {
	arg := os.Getenv(fsizeChildEnv)
	if arg == "" {
		return // not the child
	}
	var path string
	var appendMode, writev bool
	var limit, size, count int
	parts := strings.Split(arg, "|")
	require.Len(t, parts, 6)
	path = parts[0]
	_, err := fmt.Sscanf(strings.Join(parts[1:], " "), "%t %t %d %d %d", &appendMode, &writev, &limit, &size, &count)
	require.NoError(t, err)

	signal.Ignore(syscall.SIGXFSZ) // writes past the limit fail with EFBIG instead of killing us
	// Only the soft limit: it is raised back when the test ends, so that
	// the test binary can still write its coverage data under -cover.
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &old))
	lim := old
	setRlimit(&lim.Cur, int64(limit)) // the field is uint64 on Linux, int64 on the BSDs
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &lim))
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_FSIZE, &old) })
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendMode {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	require.NoError(t, err)
	defer f.Close()
	useWritev = writev
	writevRegular = writev // this child exercises writev on a regular file
	b := newTestBus(t, f, Config{Capacity: 64 << 10}, fastRetry)
	want := outputCopy
	if writev {
		want = outputWritev
	}
	require.Equal(t, want, b.kind)
	for i := range count {
		require.NoError(t, b.Enqueue(rec(nil, 0, i, size)))
	}
	err = b.Close(context.Background())
	require.ErrorIs(t, err, syscall.EFBIG)
	res, err := json.Marshal(childResult{Stats: b.Stats(), FastFails: b.d.fastFails})
	require.NoError(t, err)
	fmt.Printf("RESULT %s\n", res)
}

// setRlimit stores v in an Rlimit field of whichever integer type the
// system declares.
func setRlimit[T int64 | uint64](field *T, v int64) { *field = T(v) }
