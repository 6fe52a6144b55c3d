package otlpsink

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	stdlog "log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/core"
)

// testOptions points at rc with fast retries and no environment influence.
func testOptions(rc *receiver) Options {
	return Options{
		Endpoint:     rc.srv.URL,
		Headers:      map[string]string{},
		Compression:  "none",
		Resource:     []slog.Attr{slog.String("service.name", "svc"), slog.Int("replica", 3)},
		ScopeName:    "scope",
		ScopeVersion: "1.2.3",
		RetryInitial: 5 * time.Millisecond,
		RetryMax:     20 * time.Millisecond,
		Timeout:      5 * time.Second,
	}
}

type lazyName struct{}

func (lazyName) LogValue() slog.Value { return slog.StringValue("resolved") }

func str(s string) pbValue   { return pbValue{Kind: "string", Str: s} }
func i64(i int64) pbValue    { return pbValue{Kind: "int", Int: i} }
func kvl(kv ...pbKV) pbValue { return pbValue{Kind: "kvlist", KV: kv} }

func TestFieldByField(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{Level: slog.LevelDebug - 8})
	require.NoError(t, err)
	defer h.Close()

	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("1112131415161718")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	log := slog.New(h).With("svc", "api").WithGroup("req").With("id", 7).WithGroup("inner")

	r := slog.NewRecord(ts, slog.LevelWarn+2, "hello", 0)
	r.AddAttrs(
		slog.String("s", "x"), slog.Bool("b", true), slog.Int("i", -5),
		slog.Uint64("big", math.MaxUint64), slog.Float64("f", 1.5),
		slog.Duration("d", 3*time.Millisecond), slog.Time("t", ts),
		slog.Any("err", errors.New("boom")), slog.Any("raw", []byte{1, 2}),
		slog.Any("list", []string{"a", "b"}), slog.Any("lazy", lazyName{}),
		slog.Group("g", slog.Int("x", 1), slog.Group("empty")),
		slog.Group("", slog.Int("inlined", 2)),
		slog.Attr{}, // ignored
		slog.Any("nil", nil),
	)
	require.NoError(t, log.Handler().Handle(ctx, r))
	// Empty groups from WithGroup are dropped when the record has no attrs.
	slog.New(h).WithGroup("unused").Log(context.Background(), slog.LevelDebug-8, "bare")
	slog.New(h).Error("fatalish", "k", "v")
	require.NoError(t, h.Flush())

	recs := rc.records()
	require.Len(t, recs, 3)
	reqs := rc.requests()
	assert.Equal(t, []pbKV{{"service.name", str("svc")}, {"replica", i64(3)}}, reqs[0].Resource)
	assert.Equal(t, "scope", reqs[0].ScopeName)
	assert.Equal(t, "1.2.3", reqs[0].ScopeVersion)

	got := recs[0]
	assert.Equal(t, uint64(ts.UnixNano()), got.Time)
	assert.InDelta(t, float64(time.Now().UnixNano()), float64(got.Observed), float64(time.Minute))
	assert.Equal(t, 15, got.Severity) // WARN+2 = 6, +9
	assert.Equal(t, "WARN+2", got.SeverityText)
	assert.Equal(t, str("hello"), got.Body)
	assert.Equal(t, tid[:], got.TraceID)
	assert.Equal(t, sid[:], got.SpanID)
	assert.Equal(t, uint32(1), got.Flags)
	want := []pbKV{
		{"svc", str("api")},
		{"req", kvl(
			pbKV{"id", i64(7)},
			pbKV{"inner", kvl(
				pbKV{"s", str("x")},
				pbKV{"b", pbValue{Kind: "bool", Bool: true}},
				pbKV{"i", i64(-5)},
				pbKV{"big", str("18446744073709551615")},
				pbKV{"f", pbValue{Kind: "double", Dbl: 1.5}},
				pbKV{"d", i64(int64(3 * time.Millisecond))},
				pbKV{"t", i64(ts.UnixNano())},
				pbKV{"raw", pbValue{Kind: "bytes", Bytes: []byte{1, 2}}},
				pbKV{"list", pbValue{Kind: "array", Arr: []pbValue{str("a"), str("b")}}},
				pbKV{"lazy", str("resolved")},
				pbKV{"g", kvl(pbKV{"x", i64(1)})},
				pbKV{"inlined", i64(2)},
				pbKV{"nil", pbValue{Kind: "empty"}},
			)},
		)},
		// An error at a handler level, here under two WithGroups, is the
		// record's exception, as otelslog makes it.
		{"exception.message", str("boom")},
		{"exception.type", str("*errors.errorString")},
	}
	assert.Equal(t, want, got.Attrs)

	assert.Equal(t, 1, recs[1].Severity) // DEBUG-8 clamps to TRACE
	assert.Equal(t, "DEBUG-8", recs[1].SeverityText)
	assert.Empty(t, recs[1].Attrs)
	assert.Empty(t, recs[1].TraceID)
	assert.Equal(t, 17, recs[2].Severity)
	assert.Equal(t, "ERROR", recs[2].SeverityText)
	assert.Equal(t, []pbKV{{"k", str("v")}}, recs[2].Attrs)
}

func TestSeverityAndLevelText(t *testing.T) {
	for _, tc := range []struct {
		l    slog.Level
		sev  int
		text string
	}{
		{slog.LevelDebug - 4, 1, "DEBUG-4"}, {slog.LevelDebug, 5, "DEBUG"}, {slog.LevelInfo, 9, "INFO"},
		{slog.LevelInfo + 1, 10, "INFO+1"}, {slog.LevelWarn, 13, "WARN"}, {slog.LevelError, 17, "ERROR"},
		{slog.LevelError + 4, 21, "ERROR+4"}, {slog.LevelError + 100, 24, "ERROR+100"},
		{slog.Level(math.MaxInt), 24, slog.Level(math.MaxInt).String()}, {slog.Level(math.MinInt), 1, slog.Level(math.MinInt).String()},
	} {
		assert.Equal(t, tc.sev, severity(tc.l), tc.l)
		assert.Equal(t, tc.text, string(appendLevelText(nil, tc.l)))
		assert.Equal(t, tc.l.String(), tc.text)
	}
}

// seqs logs n numbered records and returns them in arrival order.
func seqOf(t *testing.T, r pbRecord) int {
	for _, a := range r.Attrs {
		if a.Key == "seq" {
			return int(a.Value.Int)
		}
	}
	t.Fatalf("record without seq: %+v", r)
	return -1
}

// requireEachOnce checks that records 0..n-1 arrived exactly once, in order.
func requireEachOnce(t *testing.T, recs []pbRecord, n int) {
	t.Helper()
	require.Len(t, recs, n)
	for i, r := range recs {
		require.Equal(t, i, seqOf(t, r))
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

// TestRefusedRequestDoesNotFailTheRestOfItsBatch: a batch split by
// MaxRequestBytes, one of whose requests the collector refuses (400): the
// later requests are still sent, and the handler counts exactly the
// refused records as failed.
func TestRefusedRequestDoesNotFailTheRestOfItsBatch(t *testing.T) {
	rc := newReceiver(t)
	gate := make(chan struct{})
	var refused []int // seqs of the refused request, set by the receiver
	var mu sync.Mutex
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		switch i {
		case 0:
			<-gate // hold the first request so the rest queue up as one batch
		case 2:
			http.Error(w, "one bad request", http.StatusBadRequest)
			mu.Lock()
			refused = append(refused, i)
			mu.Unlock()
			return false
		}
		return true
	})
	o := testOptions(rc)
	o.MaxRequestBytes = 400
	s, err := NewSink(o)
	require.NoError(t, err)
	var reports []error
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	require.NoError(t, err)
	log := slog.New(h)
	log.Info("first", "seq", 0)
	for rc.callCount() == 0 {
		runtime.Gosched() // the drainer's first request is held at the gate
	}
	const n = 50
	for i := 1; i <= n; i++ {
		log.Info("queued", "seq", i)
	}
	close(gate)
	require.Error(t, h.Flush(), "the refusal is reported to Flush")
	require.Error(t, h.Close(), "and to Close")
	st, hs := s.Stats(), h.Stats()
	got := rc.records()
	seen := map[int]bool{}
	for _, r := range got {
		seen[seqOf(t, r)] = true
	}
	assert.Len(t, seen, len(got), "no record sent twice")
	require.NotZero(t, st.FailedRecords, "one request was refused")
	assert.EqualValues(t, n+1, hs.Written+hs.Failed)
	assert.Equal(t, st.FailedRecords, hs.Failed, "the handler counts the refused records, not the unsent ones")
	assert.EqualValues(t, len(got), hs.Written, "Written are the records the collector accepted")
	assert.EqualValues(t, len(got), st.Sent)
	assert.EqualValues(t, 1, st.FailedBatches)
	mu.Lock()
	defer mu.Unlock()
	assert.NotEmpty(t, reports, "the refusal reached OnError")
	assert.Len(t, refused, 1, "the refused request was sent once")
}

// TestHeaderNetHTTPRefusesFailsNew: a header net/http would refuse on
// every request is an error from New naming it, not an endless retry.
func TestHeaderNetHTTPRefusesFailsNew(t *testing.T) {
	cases := map[string]struct {
		headers map[string]string
		env     string
		wantErr string // "" means accepted
	}{
		"newline in value":       {headers: map[string]string{"X-Token": "abc\ndef"}, wantErr: `header "X-Token": invalid character '\n' in the value`},
		"carriage return":        {headers: map[string]string{"X-Token": "a\rb"}, wantErr: `"X-Token"`},
		"NUL in value":           {headers: map[string]string{"X-Token": "a\x00b"}, wantErr: `"X-Token"`},
		"DEL in value":           {headers: map[string]string{"X-Token": "a\x7fb"}, wantErr: `"X-Token"`},
		"space in name":          {headers: map[string]string{"X Token": "v"}, wantErr: `header "X Token": invalid character ' ' in the name`},
		"colon in name":          {headers: map[string]string{"X:Token": "v"}, wantErr: `"X:Token"`},
		"empty name":             {headers: map[string]string{"": "v"}, wantErr: "empty name"},
		"from the environment":   {env: "X-Token=a%0Ab", wantErr: `"X-Token"`},
		"tab and UTF-8 accepted": {headers: map[string]string{"X-Token": "a\tb é"}},
		"token chars accepted":   {headers: map[string]string{"X-A_b.c~!#$%&'*+^`|": "v"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := Options{Endpoint: "http://127.0.0.1:1", Headers: tc.headers}
			c, err := resolve(o, func(k string) string {
				if k == "OTEL_EXPORTER_OTLP_HEADERS" {
					return tc.env
				}
				return ""
			})
			if tc.wantErr == "" {
				require.NoError(t, err)
				for k, v := range tc.headers {
					req, rerr := http.NewRequest(http.MethodPost, "http://x", nil)
					require.NoError(t, rerr)
					req.Header.Set(k, v)
					require.NotNil(t, c.headers.Values(k), "header %q kept", k)
				}
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
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

func TestForeignRecordsSentAsText(t *testing.T) {
	rc := newReceiver(t)
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	n, err := s.WriteBatch([][]byte{[]byte("asyncbus: dropped 3 records\n")})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	recs := rc.records()
	require.Len(t, recs, 1)
	assert.Equal(t, str("asyncbus: dropped 3 records"), recs[0].Body)
	assert.Equal(t, 13, recs[0].Severity)
	assert.EqualValues(t, 1, s.Stats().Foreign)
}

func TestDropMarkerArrivesAsRecord(t *testing.T) {
	rc := newReceiver(t)
	block := make(chan struct{})
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i == 0 {
			<-block // hold the first batch so the ring fills
		}
		return true
	})
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{Overflow: asyncbus.Drop, Capacity: 4096, OnError: func(error) {}})
	require.NoError(t, err)
	dropped := 0
	for i := 0; dropped == 0; i++ {
		if err := h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "fill "+strconv.Itoa(i), 0)); errors.Is(err, asyncbus.ErrDropped) {
			dropped++
		}
	}
	close(block)
	require.NoError(t, h.Close())
	found := false
	for _, r := range rc.records() {
		if r.Body.Kind == "string" && len(r.Body.Str) > 0 && r.SeverityText == "WARN" && r.Time == 0 {
			found = true
		}
	}
	assert.True(t, found, "the drop marker arrives as a WARN record")
	assert.NotZero(t, h.Stats().Dropped)
}

func TestReplaceAttrRefused(t *testing.T) {
	_, err := NewHandler(Options{Endpoint: "http://127.0.0.1:1"}, &asyncbus.Options{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a },
	})
	require.Error(t, err)
}

// TestSequenceRefused (issue 39): the numbers are written into text
// lines; an OTLP record has no place for them yet.
func TestSequenceRefused(t *testing.T) {
	_, err := NewHandler(Options{Endpoint: "http://127.0.0.1:1"}, &asyncbus.Options{Sequence: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Sequence is not supported yet")
}

// TestConcurrentProducersExactlyOnceInOrder: producers log through a
// small ring while the collector refuses every third request; every
// record arrives exactly once, in per-producer order.
func TestConcurrentProducersExactlyOnceInOrder(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i%3 == 1 {
			http.Error(w, "throttled", http.StatusTooManyRequests)
			return false
		}
		return true
	})
	o := testOptions(rc)
	o.RetryInitial, o.RetryMax = time.Millisecond, 2*time.Millisecond
	h, err := NewHandler(o, &asyncbus.Options{Capacity: 64 << 10, OnError: func(error) {}})
	require.NoError(t, err)
	const producers, each = 8, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			log := slog.New(h).With("p", p)
			for i := range each {
				log.LogAttrs(context.Background(), slog.LevelInfo, "stress", slog.Int("seq", i))
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Close())

	next := make([]int, producers)
	for _, r := range rc.records() {
		require.Len(t, r.Attrs, 2)
		p, seq := int(r.Attrs[0].Value.Int), int(r.Attrs[1].Value.Int)
		require.Equal(t, next[p], seq, "producer %d", p)
		next[p]++
	}
	for p, n := range next {
		require.Equal(t, each, n, "producer %d", p)
	}
	hs := h.Stats()
	require.EqualValues(t, producers*each, hs.Written)
	require.Zero(t, hs.Dropped+hs.Failed)
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

func TestAddSource(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{AddSource: true})
	require.NoError(t, err)
	slog.New(h).Info("here") // the line below is checked
	_, file, line, _ := runtime.Caller(0)
	require.NoError(t, h.Close())
	recs := rc.records()
	require.Len(t, recs, 1)
	require.Len(t, recs[0].Attrs, 3)
	assert.Equal(t, pbKV{"code.file.path", str(file)}, recs[0].Attrs[0])
	assert.Equal(t, "code.function.name", recs[0].Attrs[1].Key)
	assert.Contains(t, recs[0].Attrs[1].Value.Str, "TestAddSource")
	assert.Equal(t, pbKV{"code.line.number", i64(int64(line - 1))}, recs[0].Attrs[2])

	hv, err := openEncoded(discardBatches{}, &asyncbus.Options{AddSource: true}, newEncoder(true, ""))
	require.NoError(t, err)
	log := slog.New(hv)
	allocs := testing.AllocsPerRun(1000, func() { log.Info("cached source") })
	assert.Zero(t, allocs, "the source of a PC is resolved once")
}

func TestNamedLoggerAndContextHook(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{
		LoggerKey: "component",
		Context:   func(_ context.Context, w *asyncbus.FieldWriter) { w.AddString("tenant", "t1") },
	})
	require.NoError(t, err)
	slog.New(h.Named("db").Named("pool")).Info("named", "k", 1)
	require.NoError(t, h.Close())
	recs := rc.records()
	require.Len(t, recs, 1)
	assert.Equal(t, []pbKV{{"component", str("db.pool")}, {"tenant", str("t1")}, {"k", i64(1)}}, recs[0].Attrs)
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

// TestRefusedDropMarkerDoesNotShiftWrittenAndFailed: the collector refuses
// every request holding a drop marker. The bus counts a batch by position
// and a marker only ever opens one, so the Sink leaves a refused marker out
// of the failed records it returns: the handler's Written and Failed are
// exactly the user records the collector accepted and refused, whether the
// marker went alone (one record per request) or with user records.
func TestRefusedDropMarkerDoesNotShiftWrittenAndFailed(t *testing.T) {
	for _, tc := range []struct {
		name            string
		maxRequestBytes int
	}{
		{"marker alone in its request", 1},
		{"marker sharing its request", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate0, gate1 := make(chan struct{}), make(chan struct{})
			arrived := make(chan int, 1<<12)
			var mu sync.Mutex
			var accepted, refused [][]byte // request bodies, decoded on the test goroutine
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				i := calls
				calls++
				mu.Unlock()
				arrived <- i
				switch i {
				case 0:
					<-gate0 // the ring fills behind the first request
				case 1:
					<-gate1 // records logged now follow the gap: the marker's batch
				}
				mu.Lock()
				defer mu.Unlock()
				if bytes.Contains(b, []byte(encode.DropMessage)) {
					refused = append(refused, b)
					http.Error(w, "no markers here", http.StatusBadRequest)
					return
				}
				accepted = append(accepted, b)
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			o := Options{Endpoint: srv.URL, Headers: map[string]string{}, Compression: "none",
				RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, Timeout: 5 * time.Second,
				MaxRequestBytes: tc.maxRequestBytes}
			s, err := NewSink(o)
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{Capacity: 8192, Overflow: asyncbus.Drop, OnError: func(error) {}})
			require.NoError(t, err)
			log := slog.New(h)
			log.Info("first", "pad", strings.Repeat("x", 900))
			<-arrived // request 0 held
			for i := range 300 {
				log.Info("r", "seq", i)
			}
			require.NotZero(t, h.Stats().Dropped, "the ring overflowed")
			close(gate0)
			<-arrived // request 1 held; the first record's space is free
			for i := 300; i < 305; i++ {
				log.Info("r", "seq", i)
			}
			close(gate1)
			_ = h.Flush()
			if cerr := h.Close(); h.Stats().Failed > 0 {
				require.Error(t, cerr, "Close reports the refused request's records")
			} else {
				require.NoError(t, cerr)
			}

			mu.Lock()
			defer mu.Unlock()
			userRecords := func(bodies [][]byte) (users, markers int) {
				for _, b := range bodies {
					for _, r := range decodeRequest(t, b).Records {
						if r.Body.Kind == "string" && strings.Contains(r.Body.Str, encode.DropMessage) {
							markers++
						} else {
							users++
						}
					}
				}
				return users, markers
			}
			acceptedUsers, acceptedMarkers := userRecords(accepted)
			refusedUsers, refusedMarkers := userRecords(refused)
			require.Zero(t, acceptedMarkers)
			require.Equal(t, 1, refusedMarkers, "one drop marker, refused")
			hs, st := h.Stats(), s.Stats()
			assert.EqualValues(t, refusedUsers, hs.Failed, "Failed are the user records the collector refused")
			assert.EqualValues(t, acceptedUsers, hs.Written, "Written are the user records the collector accepted")
			assert.EqualValues(t, hs.Enqueued-hs.Dropped, hs.Written+hs.Failed, "every record kept is counted once")
			assert.EqualValues(t, refusedUsers+refusedMarkers, st.FailedRecords, "the Sink counts the refused marker too")
			assert.EqualValues(t, len(refused), st.FailedBatches)
		})
	}
}

// openEncoded opens a handler on w whose records enc encodes, as
// Sink.NewHandler does, for tests of the encoder behind a handler.
func openEncoded(w io.Writer, opts *asyncbus.Options, enc core.Encoder) (*asyncbus.Handler, error) {
	h, err := asyncbus.Open(w, opts)
	if err != nil {
		return nil, err
	}
	if err := core.Install(h, enc); err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
}
