//go:build unix

package otlpsink

import (
	"bufio"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// Environment of the kill -9 child: collector URL and ring file.
const (
	killChildEnv = "OTLPSINK_KILL_CHILD"
	killRingEnv  = "OTLPSINK_KILL_RING"
	killPhase    = 1000 // records per phase
)

// killChild logs killPhase records and flushes them (the collector is up),
// says "phase1", waits for a line on stdin (the collector is now down),
// logs killPhase more, says "accepted N" and waits to be killed.
func killChild() int {
	h, err := NewHandler(Options{
		Endpoint: os.Getenv(killChildEnv), RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond,
	}, &asyncbus.Options{Ring: asyncbus.RingOptions{File: os.Getenv(killRingEnv), Capacity: 1 << 20}, OnError: func(error) {}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	log := slog.New(h)
	for i := range killPhase {
		log.Info("kill test", "seq", i)
	}
	if err := h.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "child flush:", err)
		return 2
	}
	fmt.Println("phase1")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 2
	}
	for i := killPhase; i < 2*killPhase; i++ {
		log.Info("kill test", "seq", i)
	}
	fmt.Printf("accepted %d\n", 2*killPhase)
	select {} // the collector is down: the drainer retries until we are killed
}

// TestKill9DuringOutageDurableRing: a child logs through the durable ring,
// the collector goes down, the child logs more and is killed with SIGKILL
// while its drainer retries; a new handler on the same ring file, with the
// collector back, delivers every accepted record (at least once).
func TestKill9DuringOutageDurableRing(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		os.Exit(killChild())
	}
	rc := newReceiver(t)
	var down atomic.Bool
	var downCalls atomic.Int64
	retrying := make(chan struct{}) // closed at the second refused request
	rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
		if down.Load() {
			if downCalls.Add(1) == 2 {
				close(retrying)
			}
			panic(http.ErrAbortHandler) // the connection is cut: a network error for the client
		}
		return true
	})
	ring := filepath.Join(t.TempDir(), "otlp.ring")

	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9DuringOutageDurableRing$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+rc.srv.URL, killRingEnv+"="+ring)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "child output")
	require.Equal(t, "phase1", lines.Text())
	phase1 := len(rc.records())
	require.Equal(t, killPhase, phase1, "the first phase was delivered before the outage")

	down.Store(true)
	_, err = fmt.Fprintln(stdin)
	require.NoError(t, err)
	require.True(t, lines.Scan(), "child output")
	n, err := strconv.Atoi(strings.TrimPrefix(lines.Text(), "accepted "))
	require.NoError(t, err, lines.Text())
	// Kill while the drainer is retrying: it has tried at least once more.
	<-retrying
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	// Still down: the replay gives up after ReplayTimeout and NewHandler
	// fails, leaving the records in the ring file.
	_, err = NewHandler(Options{Endpoint: rc.srv.URL, RetryInitial: 5 * time.Millisecond, ReplayTimeout: 200 * time.Millisecond},
		&asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 1 << 20}, OnError: func(error) {}})
	require.Error(t, err)

	down.Store(false)
	s, err := NewSink(Options{Endpoint: rc.srv.URL, RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 1 << 20}, OnError: func(err error) { t.Log(err) }})
	require.NoError(t, err)
	recovered := h.Stats().Recovered
	require.NoError(t, h.Close())

	seen := make([]int, n)
	for _, r := range rc.records() {
		seq := seqOf(t, r)
		require.Less(t, seq, n)
		seen[seq]++
	}
	for seq, c := range seen {
		require.GreaterOrEqual(t, c, 1, "record %d accepted before the kill was lost", seq)
	}
	assert.GreaterOrEqual(t, recovered, uint64(n-killPhase), "the outage's records came from the ring file")
	t.Logf("%d records, %d recovered from the ring file, %d requests refused during the outage", n, recovered, downCalls.Load())
}

// TestReplayStopsAtFirstRefusal: records a crashed process left in its ring
// file are replayed by the next start. When the collector refuses one of
// them for good, the replay stops there and NewHandler fails, keeping the
// batch in the ring file: nothing after the refusal is sent, so the start
// after that (collector fixed) sends those records exactly once.
// crashedRing returns the path of the ring file a kill -9 leaves: a
// process logged n records ("replayed", seq 0..n-1) while the collector was
// down, and its ring file was copied while the drainer retried (every
// record committed in it).
func crashedRing(t *testing.T, opts func(*receiver) Options, n int) string {
	t.Helper()
	dir := t.TempDir()
	ring, image := filepath.Join(dir, "otlp.ring"), filepath.Join(dir, "crashed.ring")
	down := newReceiver(t)
	down.setAnswer(answerDown(http.StatusServiceUnavailable))
	h, err := NewHandler(opts(down), &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring}, OnError: func(error) {}})
	require.NoError(t, err)
	for i := range n {
		slog.New(h).Info("replayed", "seq", i)
	}
	for down.callCount() < 2 {
		runtime.Gosched() // the drainer is retrying: every record is committed in the ring
	}
	img, err := os.ReadFile(ring)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(image, img, 0o600))
	require.Error(t, h.Close(), "the collector stayed down")
	return image
}

func TestReplayStopsAtFirstRefusal(t *testing.T) {
	const n, refusedSeq = 10, 3
	opts := func(rc *receiver) Options {
		return Options{Endpoint: rc.srv.URL, Headers: map[string]string{}, Compression: "none",
			RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, Timeout: 5 * time.Second,
			CloseTimeout: 100 * time.Millisecond, MaxRequestBytes: 1} // one record per request
	}
	image := crashedRing(t, opts, n)

	// The next start: the collector refuses the request holding refusedSeq.
	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i == refusedSeq {
			http.Error(w, "bad record", http.StatusBadRequest)
			return false
		}
		return true
	})
	s, err := NewSink(opts(rc))
	require.NoError(t, err)
	_, err = s.NewHandler(&asyncbus.Options{Ring: asyncbus.RingOptions{File: image}, OnError: func(error) {}})
	var se *StatusError
	require.ErrorAs(t, err, &se, "the replay fails with the refusal")
	assert.Equal(t, http.StatusBadRequest, se.Code)
	sent := map[int]int{}
	for _, r := range rc.records() {
		sent[seqOf(t, r)]++
	}
	assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1}, sent, "only the records before the refusal were sent")
	assert.Equal(t, refusedSeq+1, rc.callCount(), "nothing was sent after the refusal")
	assert.EqualValues(t, 1, s.Stats().FailedRecords)

	// The start after that, with the collector fixed, replays the batch
	// again: the records after the refusal arrive exactly once.
	rc.setAnswer(nil)
	h, err := NewHandler(opts(rc), &asyncbus.Options{Ring: asyncbus.RingOptions{File: image}, OnError: func(error) {}})
	require.NoError(t, err)
	require.NoError(t, h.Close())
	sent = map[int]int{}
	for _, r := range rc.records() {
		sent[seqOf(t, r)]++
	}
	for seq := range n {
		switch {
		case seq < refusedSeq:
			assert.Equal(t, 2, sent[seq], "record %d, accepted before the refusal, is sent again (at least once)", seq)
		default:
			assert.Equal(t, 1, sent[seq], "record %d, from the refusal on, is sent exactly once", seq)
		}
	}
}
