package otlpsink

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// After its handler is closed, the Sink is still an io.Writer: a user
// writing to it (here a slog.TextHandler) whose request gets a partial
// success, or a retryable failure, has the Sink report on its own (it
// reported through the closed bus's reporter, and panicked).
func TestSinkReportsAfterItsHandlerClosed(t *testing.T) {
	rc := newReceiver(t)
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	slog.New(h).Info("one")
	require.NoError(t, h.Close())

	rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(partialSuccessBody(1, "nope"))
		return true
	})
	assert.NotPanics(t, func() {
		slog.New(slog.NewTextHandler(s, nil)).Info("written to the Sink as an io.Writer")
	})
}

// Same, with a retryable failure (the outage report) on a Write after Close.
func TestSinkRetryReportAfterItsHandlerClosed(t *testing.T) {
	rc := newReceiver(t)
	o := testOptions(rc)
	o.CloseTimeout = 50 * time.Millisecond
	s, err := NewSink(o)
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	require.NoError(t, h.CloseContext(context.Background()))
	rc.setAnswer(answerDown(http.StatusServiceUnavailable))
	assert.NotPanics(t, func() { _, _ = s.Write([]byte("x\n")) })
}

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
	h, err := NewHandler(opts(rc), &asyncbus.Options{RingFile: image, OnError: func(err error) {
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
