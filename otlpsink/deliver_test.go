package otlpsink

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

func TestUnavailableForAWhileNothingLostRetryAfterHonoured(t *testing.T) {
	rc := newReceiver(t)
	const down = 2
	var mu sync.Mutex
	var times []time.Time
	logged := make(chan struct{})
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if i < down {
			w.Header().Set("Retry-After", "1") // far above RetryMax (20 ms)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return false
		}
		<-logged // every record waits for the collector's return
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	var reports reportLog
	h, err := s.NewHandler(&asyncbus.Options{OnError: reports.add})
	require.NoError(t, err)
	const n = 2000
	for i := range n {
		slog.New(h).Info("rec", "seq", i)
	}
	close(logged)
	require.NoError(t, h.Close())

	requireEachOnce(t, rc.records(), n)
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= down; i++ {
		gap := times[i].Sub(times[i-1])
		assert.GreaterOrEqual(t, gap, 950*time.Millisecond, "retry %d came after %v", i, gap)
	}
	st := s.Stats()
	assert.EqualValues(t, down, st.Retries)
	assert.EqualValues(t, n, st.Sent)
	assert.Zero(t, st.FailedBatches)
	hs := h.Stats()
	assert.EqualValues(t, n, hs.Written)
	assert.Zero(t, hs.Failed)

	// The outage's first failure (the second is within a minute of it), then its end.
	got := reports.all()
	require.Len(t, got, 2, "%v", got)
	var retrying *retryingError
	require.ErrorAs(t, got[0], &retrying)
	assert.EqualValues(t, 1, retrying.failures)
	assert.Equal(t, "otlpsink: collector answered 503 Service Unavailable (retryable): busy", retrying.err.Error())
	var recovered *recoveredReport
	require.ErrorAs(t, got[1], &recovered)
	assert.EqualValues(t, down, recovered.failures)
	assert.EqualValues(t, n, recovered.waited, "every record waited")
}

func TestRetryAfterParsing(t *testing.T) {
	const limit = time.Minute
	cases := map[string]time.Duration{
		"3":                    3 * time.Second,
		"0":                    0,
		"":                     0,
		"soon":                 0,
		"-5":                   0,
		"60":                   limit,
		"61":                   limit,
		"9300000000":           limit, // seconds whose nanoseconds overflow int64
		"18446744073":          limit,
		"99999999999":          limit,
		"18446744073709551615": limit,
		"99999999999999999999": limit, // beyond uint64
		time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat):       0,
		time.Now().Add(1000 * time.Hour).UTC().Format(http.TimeFormat): limit,
	}
	for v, want := range cases {
		assert.Equal(t, want, retryAfter(v, limit), "Retry-After %q", v)
	}
	d := retryAfter(time.Now().Add(5*time.Second).UTC().Format(http.TimeFormat), limit)
	assert.InDelta(t, float64(5*time.Second), float64(d), float64(1100*time.Millisecond))
}

func TestBadRequestCountedAsFailedNotRetried(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i == 0 {
			http.Error(w, "malformed", http.StatusBadRequest)
			return false
		}
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	slog.New(h).Info("refused", "seq", 0)
	err = h.Flush()
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadRequest, se.Code)
	assert.True(t, se.Permanent)
	slog.New(h).Info("accepted", "seq", 0)
	require.ErrorAs(t, h.Close(), &se, "Close reports the refused record too")

	assert.Equal(t, 2, rc.callCount(), "the refused batch is sent once, not once per bus retry")
	requireEachOnce(t, rc.records(), 1)
	st := s.Stats()
	assert.EqualValues(t, 1, st.FailedBatches)
	assert.EqualValues(t, 1, st.FailedRecords)
	assert.EqualValues(t, 1, st.Sent)
	hs := h.Stats()
	assert.EqualValues(t, 1, hs.Failed)
	assert.EqualValues(t, 1, hs.Written)
	assert.Equal(t, hs.Enqueued, hs.Written+hs.Failed+hs.Dropped)
}

func TestGzip(t *testing.T) {
	rc := newReceiver(t)
	o := testOptions(rc)
	o.Compression = "gzip"
	h, err := NewHandler(o, nil)
	require.NoError(t, err)
	for i := range 100 {
		slog.New(h).Info("compressed", "seq", i)
	}
	require.NoError(t, h.Close())
	requireEachOnce(t, rc.records(), 100)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, hd := range rc.headers {
		assert.Equal(t, "gzip", hd.Get("Content-Encoding"))
	}
}

func TestHeadersSent(t *testing.T) {
	rc := newReceiver(t)
	o := testOptions(rc)
	o.Headers = map[string]string{"Authorization": "Bearer t0k"}
	h, err := NewHandler(o, nil)
	require.NoError(t, err)
	slog.New(h).Info("x", "seq", 0)
	require.NoError(t, h.Close())
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.NotEmpty(t, rc.headers)
	assert.Equal(t, "Bearer t0k", rc.headers[0].Get("Authorization"))
}

// TestUntrustedCertificateFailsTheBatchAndIsReported: a collector whose
// certificate the client does not trust fails each batch at once, counted
// and reported, instead of retrying silently (Flush hanging, and with
// Block the callers once the ring is full).
func TestUntrustedCertificateFailsTheBatchAndIsReported(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s, err := NewSink(testOptions(&receiver{srv: srv}))
	require.NoError(t, err)
	reports := make(chan error, 16)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { reports <- err }})
	require.NoError(t, err)
	slog.New(h).Info("x")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard: the flush ends at once
	defer cancel()
	ferr := h.FlushContext(ctx)
	require.Error(t, ferr)
	assert.NotErrorIs(t, ferr, context.DeadlineExceeded)
	var verr *tls.CertificateVerificationError
	assert.ErrorAs(t, ferr, &verr, "the TLS error is kept in the chain")
	require.ErrorAs(t, h.Close(), &verr, "Close reports the failed batch too")
	st := s.Stats()
	assert.Zero(t, st.Retries)
	assert.EqualValues(t, 1, st.FailedRecords)
	assert.EqualValues(t, 1, h.Stats().Failed)
	select {
	case err := <-reports:
		assert.ErrorAs(t, err, &verr)
	default:
		t.Fatal("OnError was not told") // Close returns after every report
	}
}

func TestMaxRequestBytesSplitsBatches(t *testing.T) {
	rc := newReceiver(t)
	o := testOptions(rc)
	o.MaxRequestBytes = 400
	s, err := NewSink(o)
	require.NoError(t, err)
	h, err := s.NewHandler(nil)
	require.NoError(t, err)
	const n = 50
	for i := range n {
		slog.New(h).Info("split", "seq", i)
	}
	require.NoError(t, h.Close())
	requireEachOnce(t, rc.records(), n)
	reqs := rc.requests()
	require.Greater(t, len(reqs), n/10, "batches were split")
	for _, r := range reqs {
		require.NotEmpty(t, r.Records)
	}
	require.EqualValues(t, len(reqs), s.Stats().Requests)
}
