//go:build unix

package otlpsink

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// Tests of report.go that need a ring file left by a killed child process
// (crashedRing, Unix only).

// A report made during the ring replay, before the handler exists, is kept
// and handed to the handler's reporter: Close returns only after it is
// delivered, as Options.OnError promises (it ran on a goroutine of its own).
func TestReplayReportDeliveredBeforeClose(t *testing.T) {
	opts := func(rc *receiver) Options {
		return Options{Endpoint: rc.srv.URL, Headers: map[string]string{}, Compression: "none",
			RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, Timeout: 5 * time.Second,
			CloseTimeout: 100 * time.Millisecond}
	}
	image := crashedRing(t, opts, 1)

	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i == 0 {
			http.Error(w, "down once", http.StatusServiceUnavailable)
			return false
		}
		return true
	})
	release := make(chan struct{})
	var delivered atomic.Int32
	h, err := NewHandler(opts(rc), &asyncbus.Options{Ring: asyncbus.RingOptions{File: image}, OnError: func(err error) {
		var re *retryingError
		if errors.As(err, &re) {
			<-release
			delivered.Add(1)
		}
	}})
	require.NoError(t, err)
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the replay's report was still being delivered", err)
	case <-time.After(200 * time.Millisecond): // a failure detector: Close must still be waiting
	}
	close(release)
	require.NoError(t, <-closed)
	assert.EqualValues(t, 1, delivered.Load(), "the replay's outage report was delivered before Close returned")
}
