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
// and its end once, with the records that waited and for how long.
func TestOutageAndRecoveryAreReported(t *testing.T) {
	rc := newReceiver(t)
	var down atomic.Bool
	down.Store(true)
	rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
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
	for i := range 5 {
		slog.New(h).Info("waits", "seq", i)
	}
	// Wait for the outage's report (through the handler's reporter
	// goroutine), so that all five records wait for the collector.
	for i := 0; ; i++ {
		mu.Lock()
		n := len(reports)
		mu.Unlock()
		if n > 0 {
			break
		}
		require.Less(t, i, 50_000_000, "the outage was never reported")
		runtime.Gosched()
	}
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
