package otlpsink

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// reportLog keeps what OnError is told, for a test to assert.
type reportLog struct {
	mu   sync.Mutex
	errs []error
}

// add is an Options.OnError.
func (r *reportLog) add(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// all returns the reports so far, in order.
func (r *reportLog) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

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
