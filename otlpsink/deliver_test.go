package otlpsink

import (
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// TestOutageAndRecoveryAreReported: an outage is reported with the
// collector's status text (a 503 with an empty body ends with no colon),
// and its end once, with the records that waited and for how long: those
// of the request that got through and those queued behind it.
func TestOutageAndRecoveryAreReported(t *testing.T) {
	cases := []struct {
		name  string
		alone int // records logged before the collector has answered once
	}{
		{name: "logged together", alone: 5},
		{name: "the first sent alone", alone: 1},
		{name: "two sent first", alone: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			testOutageAndRecovery(t, tc.alone)
		})
	}
}

// testOutageAndRecovery logs five records through an outage, the first
// alone of them before the collector answers its first request.
func testOutageAndRecovery(t *testing.T, alone int) {
	rc := newReceiver(t)
	var down atomic.Bool
	var answered atomic.Int64
	down.Store(true)
	rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
		defer answered.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable) // no body
			return false
		}
		w.WriteHeader(http.StatusOK)
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	s.reportEvery = 1 << 62 // one outage report
	var mu sync.Mutex
	var reports []error
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	require.NoError(t, err)
	for i := range alone {
		slog.New(h).Info("waits", "seq", i)
	}
	// The drainer retries those in its first request: the rest queue behind.
	waitUntil(t, "the collector answered", func() bool { return answered.Load() > 0 })
	for i := alone; i < 5; i++ {
		slog.New(h).Info("waits", "seq", i)
	}
	// Wait for the outage's report (through the handler's reporter
	// goroutine), so that all five records wait for the collector.
	waitUntil(t, "the outage was reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(reports) > 0 })
	down.Store(false)
	require.NoError(t, h.Flush())
	slog.New(h).Info("after", "seq", 5)
	require.NoError(t, h.Close()) // waits for the sink's reports
	requireEachOnce(t, rc.records(), 6)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 2, "the outage, then its end: %v", reports)
	assert.Equal(t, "otlpsink: collector answered 503 Service Unavailable (retryable)", errors.Unwrap(reports[0]).Error())
	assert.False(t, strings.HasSuffix(reports[0].Error(), ": "), reports[0].Error())
	var rec *recoveredReport
	require.ErrorAs(t, reports[1], &rec)
	assert.EqualValues(t, 5, rec.waited, "all five records waited")
	assert.Positive(t, rec.lasted)
	assert.Equal(t, s.Stats().Retries, rec.failures, "each failed attempt was retried")
	assert.Contains(t, reports[1].Error(), "the collector accepts records again after")
}

// waitUntil polls cond, yielding, until it holds (no sleeps, no timing).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		require.Less(t, i, 50_000_000, "never: %s", what)
		runtime.Gosched()
	}
}
