package otlpsink

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
)

// TestCloseContextGivingUpOnAHungCollectorCountsAtOnce: a collector that
// never answers; when CloseContext gives up, the handler's and the Sink's
// counts already say that the records failed (the Sink's: the batch it
// was given, whose size depends on how many records the drainer gathered
// before sending), and the request's late end counts nothing more.
func TestCloseContextGivingUpOnAHungCollectorCountsAtOnce(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		name := map[bool]string{false: "deadline", true: "cancelled"}[cancelled]
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t)
			hung := make(chan struct{}, 1)
			release := make(chan struct{})
			rc.setAnswer(func(int, http.ResponseWriter) bool {
				select {
				case hung <- struct{}{}:
				default:
				}
				<-release
				return false
			})
			t.Cleanup(func() { close(release) })
			s, err := NewSink(testOptions(rc))
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
			require.NoError(t, err)
			for i := range 10 {
				slog.New(h).Info("lost", "seq", i)
			}
			<-hung // the batch is in flight
			for i := range 5 {
				slog.New(h).Info("queued", "seq", 10+i)
			}
			var ctx context.Context
			var cancel context.CancelFunc
			if cancelled {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
			}
			defer cancel()
			require.Error(t, h.CloseContext(ctx))

			hs, ss := h.Stats(), s.Stats()
			assert.EqualValues(t, 15, hs.Failed, "the handler's books: in flight and queued")
			// The Sink counts what it was given: the batch in flight, however
			// many of the first records the drainer had gathered into it.
			inFlight := len(rc.lastRequest().Records)
			require.Positive(t, inFlight)
			assert.EqualValues(t, inFlight, ss.FailedRecords, "the Sink's books are final when Close returns")
			assert.EqualValues(t, 1, ss.FailedBatches)
			assert.Zero(t, ss.Sent)

			// The hung request ends (the Sink's context is cancelled at the
			// close deadline); the drainer's call returns: nothing changes.
			_ = h.Flush()
			assert.Equal(t, ss, s.Stats())
			assert.Equal(t, hs.Failed, h.Stats().Failed)
		})
	}
}

// TestCloseAgainstADeadCollector: pointed at a closed port,
// Close took 10 s whatever was configured, reported "context canceled"
// although nothing was cancelled, and named the output by its Go type.
// Close now takes the configured CloseTimeout (and at most a second more),
// and its error names the endpoint and says what happened, also when the
// deadline cuts a request the collector never answers.
func TestCloseAgainstADeadCollector(t *testing.T) {
	const closeTimeout = 300 * time.Millisecond
	closedPort := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.NoError(t, l.Close())
		return "http://" + l.Addr().String()
	}
	silent := func(t *testing.T) string { // accepts, reads, never answers
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return // the listener closed
				}
				go func() { _, _ = io.Copy(io.Discard, c) }() // ends when the Sink drops the connection
			}
		}()
		t.Cleanup(func() { _ = l.Close() })
		return "http://" + l.Addr().String()
	}
	tests := []struct {
		name     string
		endpoint func(t *testing.T) string
		want     string // in Close's error, after the endpoint
	}{
		{"closed port", closedPort, `: otlpsink: the collector is unreachable; gave up after [0-9]+ attempts? \(the close deadline passed\): Post "[^"]+": dial tcp [0-9.:]+: connect: connection refused \(1 record failed\)$`},
		{"no answer", silent, `: otlpsink: the collector did not accept the records; gave up after 1 attempt \(the close deadline passed\): no answer from the collector before the deadline \(1 record failed\)$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := tt.endpoint(t)
			o := Options{Endpoint: endpoint, Compression: "none", Headers: map[string]string{},
				RetryInitial: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond, Timeout: time.Minute, CloseTimeout: closeTimeout}
			var mu sync.Mutex
			var reports []string
			h, err := NewHandler(o, &asyncbus.Options{OnError: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, err.Error())
			}})
			require.NoError(t, err)
			slog.New(h).Error("before Close")
			start := time.Now()
			err = h.Close()
			took := time.Since(start)
			require.Error(t, err)
			assert.GreaterOrEqual(t, took, closeTimeout, "retried until the configured deadline")
			assert.Less(t, took, closeTimeout+sinkCloseGraceBound, "and not for the default 10 s")
			assert.Regexp(t, "^asyncbus: write "+regexp.QuoteMeta(endpoint+"/v1/logs")+tt.want, err.Error())
			assert.NotContains(t, err.Error(), "context canceled")
			assert.EqualValues(t, 1, h.Stats().Failed)
			mu.Lock()
			defer mu.Unlock()
			assert.Contains(t, reports, err.Error()[:len(err.Error())-len(" (1 record failed)")], "the give-up is reported too")
		})
	}
}

// sinkCloseGraceBound bounds how long Close may take past CloseTimeout: the
// handler's second of grace (a failure bound, not a measurement).
const sinkCloseGraceBound = time.Second

func TestCloseStopsRetryingAtDeadline(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(answerDown(http.StatusServiceUnavailable))
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	// Default options (Block mode): an otlpsink handler never writes
	// through on the logging goroutine, so no Info call waits on the
	// sink's retries while the collector is down.
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	for i := range 10 {
		slog.New(h).Info("lost", "seq", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = h.CloseContext(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "Close gave up at ctx's deadline, not after the retries")
	// The books are final when CloseContext returns, the sink's call
	// still retrying: every record counted, and they stay so.
	hs := h.Stats()
	assert.EqualValues(t, 10, hs.Enqueued)
	assert.Equal(t, hs.Enqueued, hs.Written+hs.Dropped+hs.Failed)
	assert.Zero(t, hs.Written)
	_ = h.Flush()
	after := h.Stats()
	assert.Equal(t, [3]uint64{hs.Written, hs.Dropped, hs.Failed}, [3]uint64{after.Written, after.Dropped, after.Failed})
	assert.NotZero(t, s.Stats().Retries)
}

func TestCloseWithoutDeadlineUsesCloseTimeout(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(answerDown(http.StatusBadGateway))
	o := testOptions(rc)
	o.CloseTimeout = 200 * time.Millisecond
	s, err := NewSink(o)
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	slog.New(h).Info("lost", "seq", 0)
	start := time.Now()
	err = h.Close()
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second, "Close gave up at CloseTimeout, not later")
	assert.EqualValues(t, 1, h.Stats().Failed)
	// The bus retries the given-up batch; each retry is answered without a
	// request and without counting the batch again.
	assert.EqualValues(t, 1, s.Stats().FailedBatches)
	assert.EqualValues(t, 1, s.Stats().FailedRecords)
}

// TestCloseGiveUpCountsEachBatchOnce: the Sink's failure counters agree
// with the handler's when Close gives up on a batch of several records.
func TestCloseGiveUpCountsEachBatchOnce(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(answerDown(http.StatusServiceUnavailable))
	o := testOptions(rc)
	o.CloseTimeout = 200 * time.Millisecond
	o.MaxRequestBytes = 300 // several requests per batch
	s, err := NewSink(o)
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	for i := range 20 {
		slog.New(h).Info("lost", "seq", i)
	}
	require.Error(t, h.Close())
	st := s.Stats()
	assert.EqualValues(t, 20, h.Stats().Failed+h.Stats().Written)
	assert.Equal(t, h.Stats().Failed, st.FailedRecords, "each record given up is counted once")
	assert.LessOrEqual(t, st.FailedBatches, h.Stats().Failed)
	assert.Zero(t, st.Sent)
}

// closeCountingTransport records CloseIdleConnections calls.
type closeCountingTransport struct {
	http.RoundTripper
	closes atomic.Int32
}

func (c *closeCountingTransport) CloseIdleConnections() { c.closes.Add(1) }

// TestNoGoroutinesLeftAfterClose: the Sink's own transport keeps no
// keep-alive connection (and its goroutines) after the handler's Close; a
// user's HTTPClient is left alone.
func TestNoGoroutinesLeftAfterClose(t *testing.T) {
	t.Run("own transport", func(t *testing.T) {
		rc := newReceiver(t)
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		h, err := NewHandler(testOptions(rc), nil)
		require.NoError(t, err)
		slog.New(h).Info("one", "seq", 0)
		require.NoError(t, h.Flush()) // a connection is now idle in the pool
		slog.New(h).Info("two", "seq", 1)
		require.NoError(t, h.Close()) // the final write opens and closes one more
		requireEachOnce(t, rc.records(), 2)
	})
	t.Run("user's HTTPClient", func(t *testing.T) {
		rc := newReceiver(t)
		tr := &closeCountingTransport{RoundTripper: http.DefaultTransport.(*http.Transport).Clone()}
		t.Cleanup(tr.RoundTripper.(*http.Transport).CloseIdleConnections)
		o := testOptions(rc)
		o.HTTPClient = &http.Client{Transport: tr}
		h, err := NewHandler(o, nil)
		require.NoError(t, err)
		slog.New(h).Info("one", "seq", 0)
		require.NoError(t, h.Close())
		assert.Zero(t, tr.closes.Load(), "the user's transport is the user's to close")
	})
}

func TestReplaceAttrRefused(t *testing.T) {
	_, err := NewHandler(Options{Endpoint: "http://127.0.0.1:1"}, &asyncbus.Options{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a },
	})
	require.Error(t, err)
}

// openEncoded opens a handler on w whose records enc encodes, as
// Sink.NewHandler does, for tests of the encoder behind a handler.
func openEncoded(w io.Writer, opts *asyncbus.Options, enc asyncbus.Encoder) (*asyncbus.Handler, error) {
	return asyncbus.OpenWithEncoder(w, enc, opts)
}

// The flight recorder keeps records in the handler's own format, not
// OTLP's: NewHandler refuses it before it opens anything, and leaves no
// handler running.
func TestNewHandlerRefusesFlightRecorder(t *testing.T) {
	rc := newReceiver(t)
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h, err := s.NewHandler(&asyncbus.Options{Features: asyncbus.FeatureOptions{FlightRecorder: &asyncbus.FlightRecorder{}}})
	require.ErrorContains(t, err, "FlightRecorder")
	assert.Nil(t, h)
}
