package otlpsink

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

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

func TestPartialSuccessCounted(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
		// ExportLogsServiceResponse{partial_success{rejected_log_records: 2, error_message: "x"}}
		var ps []byte
		ps = protowire.AppendTag(ps, 1, protowire.VarintType)
		ps = protowire.AppendVarint(ps, 2)
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, "too old")
		var resp []byte
		resp = protowire.AppendTag(resp, 1, protowire.BytesType)
		resp = protowire.AppendBytes(resp, ps)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	var reports reportLog
	h, err := s.NewHandler(&asyncbus.Options{OnError: reports.add})
	require.NoError(t, err)
	for i := range 5 {
		slog.New(h).Info("r", "seq", i)
	}
	require.NoError(t, h.Close())
	st := s.Stats()
	assert.EqualValues(t, 5, st.Sent)
	assert.EqualValues(t, 2*st.Requests, st.Rejected)
	assert.NotZero(t, st.Rejected)
	// The first partial success at once, the others within a minute of it.
	got := reports.all()
	require.Len(t, got, 1, "%v", got)
	assert.EqualError(t, got[0], "otlpsink: the collector rejected 2 records in 1 accepted request (counted in Stats.Rejected): too old")
}

// TestOutageIsReportedOnceThenRateLimited: retryable failures are retried
// inside WriteBatch; OnError hears of the first failure of an outage at
// once, then at most once per reportEvery with the count, and again at
// the first failure of the next outage.
func TestOutageIsReportedOnceThenRateLimited(t *testing.T) {
	rc := newReceiver(t)
	var failUntil atomic.Int64
	failUntil.Store(5) // calls 0..4 fail
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if int64(i) < failUntil.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return false
		}
		w.WriteHeader(http.StatusOK)
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	s.reportEvery = time.Hour
	var mu sync.Mutex
	var reports []error
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	require.NoError(t, err)
	slog.New(h).Info("one", "seq", 0)
	require.NoError(t, h.Flush())
	// The report goes through the handler's reporter goroutine: wait for
	// it (polling, yielding), then check that it is the only one.
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
	mu.Lock()
	require.Len(t, outageReports(reports), 1, "one report for five failed attempts")
	var re *retryingError
	require.ErrorAs(t, reports[0], &re)
	assert.EqualValues(t, 1, re.failures)
	assert.Contains(t, reports[0].Error(), "503")
	mu.Unlock()
	assert.EqualValues(t, 5, s.Stats().Retries, "each failed attempt was repeated")

	failUntil.Store(int64(rc.callCount()) + 3) // a second outage
	slog.New(h).Info("two", "seq", 1)
	require.NoError(t, h.Flush())
	require.NoError(t, h.Close())
	s.reports.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, outageReports(reports), 2, "the next outage is reported at its first failure")
	require.Len(t, reports, 4, "each outage's end is reported once")
	requireEachOnce(t, rc.records(), 2)

	// With a short interval, a long outage is reported again with its count.
	s2 := &Sink{reportEvery: 0}
	var got []error
	s2.onError = func(err error) { mu.Lock(); got = append(got, err); mu.Unlock() }
	mu.Unlock()
	for range 3 {
		s2.noteRetry(errors.New("refused"))
	}
	s2.reports.Wait()
	mu.Lock()
	require.Len(t, got, 3)
	var last *retryingError
	require.ErrorAs(t, got[0], &last) // delivery order is free; the counts are 1, 2, 3
	counts := map[uint64]bool{}
	for _, e := range got {
		require.ErrorAs(t, e, &last)
		counts[last.failures] = true
	}
	assert.Equal(t, map[uint64]bool{1: true, 2: true, 3: true}, counts)
}

// outageReports are the reports of reports that say an outage goes on.
func outageReports(reports []error) []error {
	var out []error
	for _, r := range reports {
		var re *retryingError
		if errors.As(r, &re) {
			out = append(out, r)
		}
	}
	return out
}

func TestRejectedCountLastValueWins(t *testing.T) {
	ps := func(vals ...uint64) []byte {
		var in []byte
		for _, v := range vals {
			in = protowire.AppendTag(in, 1, protowire.VarintType)
			in = protowire.AppendVarint(in, v)
		}
		out := protowire.AppendTag(nil, 1, protowire.BytesType)
		return protowire.AppendBytes(out, in)
	}
	cases := map[string]struct {
		body []byte
		want uint64
	}{
		"absent":                      {nil, 0},
		"one value":                   {ps(3), 3},
		"repeated in one message":     {ps(3, 5), 5},
		"repeated partial_success":    {append(ps(7), ps(2)...), 2},
		"later message without field": {append(ps(7), ps()...), 7},
	}
	for name, tc := range cases {
		rejected, _ := partialSuccess(tc.body)
		assert.Equal(t, tc.want, rejected, name)
	}
}

// partialSuccessBody is an ExportLogsServiceResponse body with partial_success
// {rejected_log_records: rejected, error_message: msg}.
func partialSuccessBody(rejected uint64, msg string) []byte {
	var in []byte
	in = protowire.AppendTag(in, 1, protowire.VarintType)
	in = protowire.AppendVarint(in, rejected)
	if msg != "" {
		in = protowire.AppendTag(in, 2, protowire.BytesType)
		in = protowire.AppendString(in, msg)
	}
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, in)
}

// A partial success (the collector accepts a request but rejects some of
// its records) is counted in Stats.Rejected and told to OnError with the
// collector's message: at the first one, then at most every reportEvery
// with the counts since (the OTel Go SDK reports each one to its handler).
func TestPartialSuccessIsReported(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(partialSuccessBody(1, "attribute too long"))
		return true
	})
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	s.reportEvery = time.Hour
	var mu sync.Mutex
	var reports []error
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	require.NoError(t, err)
	for i := range 3 {
		slog.New(h).Info("one", "seq", i)
		require.NoError(t, h.Flush()) // one request each
	}
	require.NoError(t, h.Close())
	s.reports.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1, "the first partial success is reported, the next two within the interval are not: %v", reports)
	assert.Equal(t, "otlpsink: the collector rejected 1 record in 1 accepted request (counted in Stats.Rejected): attribute too long", reports[0].Error())
	assert.EqualValues(t, 3, s.Stats().Rejected)
}

func TestPartialMessage(t *testing.T) {
	msg := func(b []byte) string { _, m := partialSuccess(b); return m }
	assert.Equal(t, "", msg(nil))
	assert.Equal(t, "", msg(partialSuccessBody(2, "")))
	assert.Equal(t, "too big", msg(partialSuccessBody(2, "too big")))
	assert.Equal(t, "b", msg(append(partialSuccessBody(1, "a"), partialSuccessBody(1, "b")...)), "the last value wins")
	assert.Equal(t, "x\uFFFDy", msg(partialSuccessBody(1, "x\xffy")), "made valid UTF-8")
}

// The Sink's own reports (an outage, a partial success) go through the
// handler's reporter, so Close returns only after they are delivered, as
// Options.OnError promises, and OnError is never called concurrently.
// (They ran on goroutines of their own, which Close did not wait for.)
func TestCloseWaitsForTheSinksReports(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(answerDown(http.StatusServiceUnavailable))
	o := testOptions(rc)
	o.CloseTimeout = 100 * time.Millisecond
	s, err := NewSink(o)
	require.NoError(t, err)
	var delivered, inside, overlapped atomic.Int32
	release := make(chan struct{})
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) {
		if inside.Add(1) > 1 {
			overlapped.Add(1)
		}
		defer inside.Add(-1)
		var re *retryingError
		if errors.As(err, &re) {
			<-release // a slow OnError: Close must wait for it
			delivered.Add(1)
		}
	}})
	require.NoError(t, err)
	slog.New(h).Info("lost", "seq", 0)
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the outage report was still being delivered", err)
	case <-time.After(200 * time.Millisecond): // a failure detector: Close must still be waiting
	}
	close(release)
	require.Error(t, <-closed, "the record failed")
	assert.EqualValues(t, 1, delivered.Load(), "delivered before Close returned")
	assert.Zero(t, overlapped.Load(), "OnError is never called concurrently")
}
