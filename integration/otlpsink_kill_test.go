//go:build collector && unix

package integration

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

const (
	otlpKillURLEnv  = "ASYNCBUS_OTLP_KILL_URL"
	otlpKillRingEnv = "ASYNCBUS_OTLP_KILL_RING"
	otlpKillN       = 3000
)

// otlpKillChild logs otlpKillN records towards a collector that is not
// running, says "accepted N" and waits to be killed.
func otlpKillChild() int {
	h, err := otlpsink.NewHandler(otlpsink.Options{
		Endpoint: os.Getenv(otlpKillURLEnv), RetryInitial: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond,
	}, &asyncbus.Options{Ring: asyncbus.RingOptions{File: os.Getenv(otlpKillRingEnv), Capacity: 4 << 20}, OnError: func(error) {}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	for i := range otlpKillN {
		slog.New(h).Info("durable", "seq", i)
	}
	fmt.Printf("accepted %d\n", otlpKillN)
	select {}
}

// TestOTLPSinkKill9WhileCollectorDown: a child logs through the durable
// ring while no collector runs, and is killed with SIGKILL; once the
// Collector's receiver is up, a new handler on the same ring file delivers
// every accepted record (at least once).
func TestOTLPSinkKill9WhileCollectorDown(t *testing.T) {
	if os.Getenv(otlpKillURLEnv) != "" {
		os.Exit(otlpKillChild())
	}
	addr := freeAddr(t) // nothing listens there yet: connection refused
	url := "http://" + addr
	ring := filepath.Join(t.TempDir(), "otlp.ring")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOTLPSinkKill9WhileCollectorDown$")
	cmd.Env = append(os.Environ(), otlpKillURLEnv+"="+url, otlpKillRingEnv+"="+ring)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "child output")
	n, err := strconv.Atoi(strings.TrimPrefix(lines.Text(), "accepted "))
	require.NoError(t, err, lines.Text())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	sink := new(consumertest.LogsSink)
	startLogsReceiverAt(t, sink, addr)
	h, err := otlpsink.NewHandler(otlpsink.Options{Endpoint: url}, &asyncbus.Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 4 << 20}, OnError: func(err error) { t.Log(err) }})
	require.NoError(t, err)
	require.EqualValues(t, n, h.Stats().Recovered)
	require.NoError(t, h.Close())

	seen := make([]int, n)
	for _, r := range logRecords(sink) {
		v, ok := r.Attributes().Get("seq")
		require.True(t, ok)
		seen[v.Int()]++
	}
	for i, c := range seen {
		require.GreaterOrEqual(t, c, 1, "record %d accepted before the kill was lost", i)
	}
}
