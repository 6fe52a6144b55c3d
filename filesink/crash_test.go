package filesink_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
)

// Environment of the kill -9 child: the log path, the counter file and the
// first sequence number.
const (
	maxInFlight     = 1
	crashChildEnv   = "FILESINK_CRASH_CHILD"
	crashCounterEnv = "FILESINK_CRASH_COUNTER"
	crashStartEnv   = "FILESINK_CRASH_START"
)

// crashChild logs numbered JSON records through the asyncbus handler into a
// filesink.File until it is killed. After each
// record is accepted it stores the sequence number in the counter file with
// pwrite (the page cache survives SIGKILL), so the parent knows exactly what
// was accepted.
func crashChild(path string) int {
	start, err := strconv.ParseUint(os.Getenv(crashStartEnv), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad start:", err)
		return 2
	}
	counter, err := os.OpenFile(os.Getenv(crashCounterEnv), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	f, err := filesink.Open(path, filesink.Options{Preallocate: 1 << 20, MaxSize: 0})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	h := asyncbus.NewHandler(f, &asyncbus.Options{OnError: func(err error) { fmt.Fprintln(os.Stderr, err) }})
	log := slog.New(h)
	fmt.Println("ready")
	pad := strings.Repeat("p", 16<<10)
	rng := rand.New(rand.NewPCG(start, 7))
	var cnt [8]byte
	for seq := start; ; seq++ {
		n := 40 + rng.IntN(400)
		if rng.IntN(50) == 0 {
			n = 4<<10 + rng.IntN(12<<10) // some records span pages
		}
		log.Info("crash test", "seq", seq, "pad", pad[:n])
		binary.LittleEndian.PutUint64(cnt[:], seq)
		if _, err := counter.WriteAt(cnt[:], 0); err != nil {
			return 2
		}
	}
}

func TestKill9Crash(t *testing.T) {
	const trials = 20
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.log")
	counterPath := filepath.Join(dir, "counter")
	rng := rand.New(rand.NewPCG(2024, 5)) // fixed seed: reproducible kill times
	var lastSeq uint64                    // last sequence number in the file
	var checked int64                     // bytes of the file verified so far
	var totalLost, totalAccepted uint64
	repairs := 0
	for trial := range trials {
		start := lastSeq + 1
		require.NoError(t, os.WriteFile(counterPath, make([]byte, 8), 0o644))
		cmd := startCrashChild(t, path, counterPath, start)
		// The random moment of the kill (not a synchronisation): 1-60 ms of logging.
		time.Sleep(time.Duration(1+rng.IntN(60)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		require.Error(t, err)
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.Equal(t, syscall.SIGKILL, ws.Signal(), "child died of %v", err)

		cb, err := os.ReadFile(counterPath)
		require.NoError(t, err)
		accepted := binary.LittleEndian.Uint64(cb) // last accepted seq, 0 if none

		var reported []error
		f, err := filesink.Open(path, filesink.Options{OnError: func(err error) { reported = append(reported, err) }})
		require.NoError(t, err)
		require.NoError(t, f.Close()) // the repair is reported at the first use at the latest
		if r := f.Repaired(); r != nil {
			repairs++
			require.Len(t, reported, 1)
			assert.Equal(t, r, reported[0])
			t.Logf("trial %d: repaired torn tail: %v", trial, r)
		} else {
			require.Empty(t, reported)
		}

		// Only this trial's part of the file is new; the earlier part was
		// verified already and ends in a newline, so the repair cannot touch it.
		b := readFrom(t, path, checked)
		checked += int64(len(b))
		require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "torn line after repair")
		prev := lastSeq
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if len(b) == 0 {
				break
			}
			var rec struct {
				Seq uint64 `json:"seq"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &rec), "trial %d line %d not JSON: %.80q", trial, i, l)
			require.Greater(t, rec.Seq, prev, "trial %d line %d: sequence not strictly increasing", trial, i)
			prev = rec.Seq
		}
		lastSeq = prev
		var lost uint64
		if accepted >= start {
			totalAccepted += accepted - start + 1
			if accepted > lastSeq {
				lost = accepted - lastSeq
			}
		}
		// The record being counted may already be in the file. A child killed
		// before its first count leaves 0: it handed over nothing new.
		handed := max(accepted, start-1)
		require.LessOrEqual(t, lastSeq, handed+maxInFlight, "more records in the file than were handed over")
		totalLost += lost
		t.Logf("trial %2d: accepted %5d..%-6d in file up to %-6d lost %d", trial, start, accepted, lastSeq, lost)
	}
	t.Logf("summary: %d trials, %d records accepted, %d accepted-but-lost, %d torn tails repaired",
		trials, totalAccepted, totalLost, repairs)
}

// startCrashChild starts this test binary as the crash child, logging
// into path from sequence number start (counting in counterPath), and
// returns once the child says it is logging.
func startCrashChild(t *testing.T, path, counterPath string, start uint64) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashCounterEnv+"="+counterPath,
		crashStartEnv+"="+strconv.FormatUint(start, 10))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return cmd
}

// readFrom reads name from offset off to the end.
func readFrom(t *testing.T, name string, off int64) []byte {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	require.GreaterOrEqual(t, fi.Size(), off, "verified records disappeared")
	b := make([]byte, fi.Size()-off)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	return b
}
