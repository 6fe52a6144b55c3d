//go:build unix

package main

// -check on what asyncbus writes with Options.Features.Sequence and the
// durable ring (Options.Ring.File) across kill -9: records a killed process
// accepted are written by the next one, with the numbers and run identity
// of the process that accepted them.

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const durableChildEnv = "ASYNCBUS_PRETTY_DURABLE_CHILD"

// slowFile is a filesink.File that takes a while for every write, so that
// a small ring in Drop mode drops records. Its Path method lets the ring's
// recovery find and read back the file; the file sets aside a tail a kill
// tore when it is opened, and hears which record the replay writes again.
type slowFile struct{ f *filesink.File }

func (s *slowFile) Write(p []byte) (int, error) {
	time.Sleep(200 * time.Microsecond) // a slow disk, not synchronisation
	return s.f.Write(p)
}

func (s *slowFile) Path() string { return s.f.Path() }

func (s *slowFile) SettleTornTail(rec []byte) { s.f.SettleTornTail(rec) }

// durableOptions are the options of the durable children and of the final
// recovery: numbers, the ring file, and for drop Drop mode on a small ring.
func durableOptions(ring string, drop bool) *asyncbus.Options {
	o := &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring}, Features: asyncbus.FeatureOptions{Sequence: true}}
	if drop {
		o.Ring.Overflow, o.Ring.Capacity = asyncbus.Drop, 4<<10
	}
	return o
}

// openDurable opens the handler of a durable child or of the final recovery
// on the output file path: an *os.File, or for drop a slowFile. done closes
// the output.
func openDurable(path, ring string, drop bool) (h *asyncbus.Handler, done func() error, err error) {
	var w io.Writer
	if drop {
		f, err := filesink.Open(path, filesink.Options{})
		if err != nil {
			return nil, nil, err
		}
		w, done = &slowFile{f: f}, f.Close
	} else {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, err
		}
		w, done = f, f.Close
	}
	h, err = asyncbus.Open(w, durableOptions(ring, drop))
	return h, done, err
}

// durableChild logs numbered records from 4 goroutines until it is killed,
// after printing how many records it replayed from the ring file.
func durableChild(spec string) int {
	path, ring, drop := spec, spec+".ring", strings.HasSuffix(spec, ".drop")
	h, _, err := openDurable(path, ring, drop)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("recovered %d\n", h.Stats().Recovered)
	l := slog.New(h)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				l.Info("request handled", "g", g, "i", i, "path", "/api/v1/users/12345/orders")
			}
		})
	}
	wg.Wait()
	return 0
}

// TestCheckAfterKill9WithDurableRing kills a child logging numbered records
// through the durable ring several times, restarting it on the same ring
// file and output, then replays the last one's ring in this process: -check
// finds every run's numbers complete, each once (gaps only under drop
// markers in Drop mode), and fails once a record is removed.
func TestCheckAfterKill9WithDurableRing(t *testing.T) {
	if spec := os.Getenv(durableChildEnv); spec != "" {
		os.Exit(durableChild(spec))
	}
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprint("drop=", drop), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.log")
			if drop {
				path += ".drop"
			}
			const runs = 4
			recovered := uint64(0)
			for r := range runs {
				recovered += killDurableChild(t, path, r)
			}
			h, done, err := openDurable(path, path+".ring", drop)
			require.NoError(t, err)
			recovered += h.Stats().Recovered
			require.NoError(t, h.Close())
			require.NoError(t, done())
			require.Positive(t, recovered, "some records were replayed from the ring file")

			code, out := checkFiles(t, path)
			t.Logf("%d records replayed; -check says:\n%s", recovered, out)
			assert.Equal(t, 0, code, out)
			assert.Equal(t, runs, strings.Count(out, " 0 missing, 0 duplicated, 0 out of order: ok\n"), out)
			if drop {
				assert.NotContains(t, out, " 0 dropped at", "every run dropped records in Drop mode:\n%s", out)
			}

			// One record less: its run's numbers have a gap no marker explains.
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.SplitAfter(string(data), "\n")
			i := len(lines) / 2
			for ; i+1 < len(lines); i++ { // a record the next line's number follows in its run
				if !strings.Contains(lines[i]+lines[i+1], "dropped") && runOf(lines[i]) != "" && runOf(lines[i]) == runOf(lines[i+1]) {
					break
				}
			}
			require.Less(t, i+1, len(lines))
			cut := strings.Join(append(lines[:i:i], lines[i+1:]...), "")
			code, out = checkBytes(t, []byte(cut))
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "1 missing", out)
		})
	}
}

// killDurableChild starts a durable child on path, kills it with SIGKILL
// once it has written at least 64 KiB after its replay, and returns how many records
// it replayed from the ring file at its start.
func killDurableChild(t *testing.T, path string, r int) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckAfterKill9WithDurableRing$")
	cmd.Env = append(os.Environ(), durableChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	waited := false
	t.Cleanup(func() { // a failed run leaves no child behind
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	first, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "run %d did not start", r)
	n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(first, "recovered ")), 10, 64)
	require.NoError(t, err, first)
	before := fileSize(path)                    // after the replay: this run writes its own records
	deadline := time.Now().Add(2 * time.Minute) // generous: a loaded machine
	for fileSize(path) < before+64<<10 {
		require.True(t, time.Now().Before(deadline), "run %d wrote less than 64 KiB in 2 minutes", r)
		time.Sleep(time.Millisecond) // polling the file, not synchronisation
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	var ee *exec.ExitError
	err = cmd.Wait()
	waited = true
	require.ErrorAs(t, err, &ee)
	return n
}

// runOf returns the run identity of a numbered JSON line.
func runOf(line string) string {
	_, rest, ok := strings.Cut(line, `,"run":"`)
	if !ok || len(rest) < 16 {
		return ""
	}
	return rest[:16]
}
