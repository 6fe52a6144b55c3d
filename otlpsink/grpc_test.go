package otlpsink

import (
	"crypto/tls"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
)

// logSeq logs records 0..n-1 through h, each with its seq attribute.
func logSeq(h slog.Handler, n int) {
	for i := range n {
		slog.New(h).Info("rec", "seq", i)
	}
}

func TestGRPCDeliversEveryRecordOnceInOrder(t *testing.T) {
	for _, comp := range []string{"none", "gzip"} {
		t.Run(comp, func(t *testing.T) {
			rc := newGRPCReceiver(t)
			o := grpcOptions(rc)
			o.Compression = comp
			o.Headers = map[string]string{"Authorization": "Bearer x"}
			o.Timeout = 7 * time.Second
			s, err := NewSink(o)
			require.NoError(t, err)
			h, err := s.NewHandler(nil)
			require.NoError(t, err)
			const n = 3000
			logSeq(h, n/2)
			require.NoError(t, h.Flush())
			beforeClose, _ := rc.requests()
			logSeq2 := func(from, to int) {
				for i := from; i < to; i++ {
					slog.New(h).Info("rec", "seq", i)
				}
			}
			logSeq2(n/2, n)
			require.NoError(t, h.Close())

			requireEachOnce(t, rc.records(), n)
			calls, invalid := rc.requests()
			require.Empty(t, invalid)
			require.NotEmpty(t, calls)
			c := calls[0]
			assert.Equal(t, "HTTP/2.0", c.Proto)
			for _, other := range calls[:len(beforeClose)] {
				// After Close began, each write closes its connection when done.
				assert.Equal(t, c.RemoteAddr, other.RemoteAddr, "every call before Close on one connection")
			}
			assert.Equal(t, "Bearer x", c.Header.Get("Authorization"))
			assert.Equal(t, "7000000u", c.Header.Get("Grpc-Timeout"))
			assert.Equal(t, "gzip", c.Header.Get("Grpc-Accept-Encoding"))
			if comp == "gzip" {
				assert.Equal(t, "gzip", c.Header.Get("Grpc-Encoding"))
			} else {
				assert.Empty(t, c.Header.Get("Grpc-Encoding"))
			}
			st := s.Stats()
			assert.EqualValues(t, n, st.Sent)
			assert.EqualValues(t, len(calls), st.Requests)
			assert.Zero(t, st.Retries+st.FailedBatches)
			assert.EqualValues(t, n, h.Stats().Written)
			assert.Equal(t, rc.srv.URL+grpcExportPath, s.Name())
		})
	}
}

func TestGRPCOverTLSNegotiatesH2(t *testing.T) {
	rc := newGRPCReceiverTLS(t)
	o := grpcOptions(rc)
	o.TLSConfig = &tls.Config{RootCAs: rc.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	h, err := NewHandler(o, nil)
	require.NoError(t, err)
	logSeq(h, 10)
	require.NoError(t, h.Close())
	requireEachOnce(t, rc.records(), 10)
	calls, _ := rc.requests()
	require.NotEmpty(t, calls)
	assert.Equal(t, "h2", calls[0].ALPN)
	assert.Equal(t, "HTTP/2.0", calls[0].Proto)
}

// TestGRPCPartialSuccessCounted: the response message's partial_success,
// plain or gzipped, is counted and reported as over HTTP.
func TestGRPCPartialSuccessCounted(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		rc := newGRPCReceiver(t)
		rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
			enc := ""
			if compressed {
				enc = "gzip"
			}
			grpcReplyRaw(w, grpcFrame(partialSuccessBody(2, "bad attr"), compressed), enc, 0, "", nil)
			return true
		})
		s, err := NewSink(grpcOptions(rc))
		require.NoError(t, err)
		var reports reportLog
		h, err := s.NewHandler(&asyncbus.Options{OnError: reports.add})
		require.NoError(t, err)
		logSeq(h, 3)
		require.NoError(t, h.Close())
		st := s.Stats()
		assert.EqualValues(t, 3, st.Sent)
		assert.EqualValues(t, 2*st.Requests, st.Rejected)
		got := reports.all()
		require.NotEmpty(t, got)
		assert.Contains(t, got[0].Error(), "bad attr")
	}
}

// grpcStatusCase is one answer and how the Sink must take it.
type grpcStatusCase struct {
	name      string
	answer    func(w http.ResponseWriter)
	retried   bool
	errorText string // in the error of a refused batch (not retried)
}

func grpcStatusCases() []grpcStatusCase {
	var cases []grpcStatusCase
	retryable := map[int]string{1: "CANCELLED", 4: "DEADLINE_EXCEEDED", 10: "ABORTED", 11: "OUT_OF_RANGE", 14: "UNAVAILABLE", 15: "DATA_LOSS"}
	permanent := map[int]string{2: "UNKNOWN", 3: "INVALID_ARGUMENT", 5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 9: "FAILED_PRECONDITION", 12: "UNIMPLEMENTED", 13: "INTERNAL", 16: "UNAUTHENTICATED", 99: "code 99"}
	for code, name := range retryable {
		cases = append(cases,
			grpcStatusCase{name: name + " in trailers", retried: true, answer: func(w http.ResponseWriter) { grpcReply(w, code, "busy", nil) }},
			grpcStatusCase{name: name + " trailers-only", retried: true, answer: func(w http.ResponseWriter) { grpcTrailersOnly(w, code, "busy", nil) }})
	}
	for code, name := range permanent {
		cases = append(cases,
			grpcStatusCase{name: name + " in trailers", errorText: name + " (permanent): no 100%", answer: func(w http.ResponseWriter) { grpcReply(w, code, "no 100%", nil) }},
			grpcStatusCase{name: name + " trailers-only", errorText: name + " (permanent): no 100%", answer: func(w http.ResponseWriter) { grpcTrailersOnly(w, code, "no 100%", nil) }})
	}
	return append(cases,
		grpcStatusCase{name: "RESOURCE_EXHAUSTED without RetryInfo", errorText: "RESOURCE_EXHAUSTED (permanent): quota",
			answer: func(w http.ResponseWriter) { grpcTrailersOnly(w, 8, "quota", rpcStatus(8, "quota", -1, 0)) }},
		grpcStatusCase{name: "RESOURCE_EXHAUSTED with RetryInfo", retried: true,
			answer: func(w http.ResponseWriter) { grpcTrailersOnly(w, 8, "quota", rpcStatus(8, "quota", 0, 1e6)) }},
		grpcStatusCase{name: "HTTP 503 from a proxy", retried: true,
			answer: func(w http.ResponseWriter) { http.Error(w, "no upstream", http.StatusServiceUnavailable) }},
		grpcStatusCase{name: "HTTP 404 from a proxy", errorText: "UNIMPLEMENTED (permanent): HTTP 404 Not Found: nope",
			answer: func(w http.ResponseWriter) { http.Error(w, "nope", http.StatusNotFound) }},
	)
}

// TestGRPCStatusClasses: each status the OTLP specification retries is
// retried until the collector accepts; every other is counted as failed
// at once, with its name and message in the error, whether the status
// comes in the trailers or in a trailers-only answer.
func TestGRPCStatusClasses(t *testing.T) {
	for _, tc := range grpcStatusCases() {
		t.Run(tc.name, func(t *testing.T) {
			rc := newGRPCReceiver(t)
			rc.setAnswer(func(i int, w http.ResponseWriter) bool {
				if i == 0 {
					tc.answer(w)
					return false
				}
				return true
			})
			s, err := NewSink(grpcOptions(rc))
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
			require.NoError(t, err)
			slog.New(h).Info("first", "seq", 0)
			flushErr := h.Flush()
			slog.New(h).Info("second", "seq", 1)
			closeErr := h.Close()
			st, hs := s.Stats(), h.Stats()
			if tc.retried {
				require.NoError(t, flushErr)
				require.NoError(t, closeErr)
				requireEachOnce(t, rc.records(), 2)
				assert.EqualValues(t, 1, st.Retries)
				assert.Zero(t, st.FailedBatches)
				assert.EqualValues(t, 2, hs.Written)
				return
			}
			var ge *GRPCError
			require.ErrorAs(t, flushErr, &ge)
			assert.True(t, ge.Permanent)
			assert.Contains(t, flushErr.Error(), tc.errorText)
			assert.Zero(t, st.Retries)
			assert.EqualValues(t, 1, st.FailedBatches)
			assert.EqualValues(t, 1, st.FailedRecords)
			assert.EqualValues(t, 1, hs.Failed)
			assert.EqualValues(t, 1, hs.Written)
			recs := rc.records()
			require.Len(t, recs, 1)
			assert.Equal(t, "second", recs[0].Body.Str)
		})
	}
}

// TestGRPCRetryInfoDelayHonoured: RESOURCE_EXHAUSTED with a RetryInfo of
// 300 ms holds the retry that long, far above the back-off (RetryMax
// 20 ms); nothing is lost.
func TestGRPCRetryInfoDelayHonoured(t *testing.T) {
	rc := newGRPCReceiver(t)
	var mu sync.Mutex
	var times []time.Time
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if i < 2 {
			grpcReply(w, 8, "slow down", rpcStatus(8, "slow down", 0, 300e6))
			return false
		}
		return true
	})
	s, err := NewSink(grpcOptions(rc))
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	logSeq(h, 500)
	require.NoError(t, h.Close())
	requireEachOnce(t, rc.records(), 500)
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(times), 3)
	for i := 1; i <= 2; i++ {
		assert.GreaterOrEqual(t, times[i].Sub(times[i-1]), 290*time.Millisecond, "retry %d", i)
	}
	assert.EqualValues(t, 2, s.Stats().Retries)
}

// TestGRPCMalformedAnswers: an answer that breaks the gRPC framing never
// crashes the Sink; without a status it fails the batch with an error
// that says what was wrong; with status OK the records count as sent and
// the unreadable answer is reported.
func TestGRPCMalformedAnswers(t *testing.T) {
	cases := []struct {
		name     string
		answer   func(w http.ResponseWriter)
		accepted bool
		text     string
	}{
		{"no grpc-status", func(w http.ResponseWriter) { grpcReplyRaw(w, grpcFrame(nil, false), "", -1, "", nil) },
			false, "INTERNAL (permanent): the answer has no grpc-status"},
		{"truncated frame, no status", func(w http.ResponseWriter) { grpcReplyRaw(w, []byte{0, 0, 0, 0, 9, 1}, "", -1, "", nil) },
			false, "no grpc-status; malformed gRPC frame: 9 bytes announced, 1 received"},
		{"not a number", func(w http.ResponseWriter) {
			grpcReplyRaw(w, nil, "", -1, "", nil)
			w.Header().Set(http.TrailerPrefix+"Grpc-Status", "x1")
		},
			false, `INTERNAL (permanent): malformed grpc-status "x1"`},
		{"not gRPC", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>"))
		},
			false, `UNKNOWN (permanent): not a gRPC answer: content-type "text/html"`},
		{"flag byte", func(w http.ResponseWriter) { grpcReplyRaw(w, []byte{7, 0, 0, 0, 0}, "", 0, "", nil) },
			true, "malformed gRPC frame: flag byte 0x7"},
		{"short prefix", func(w http.ResponseWriter) { grpcReplyRaw(w, []byte{0, 0}, "", 0, "", nil) },
			true, "2 bytes, shorter than its 5-byte prefix"},
		{"bytes after the message", func(w http.ResponseWriter) {
			grpcReplyRaw(w, append(grpcFrame(nil, false), grpcFrame(nil, false)...), "", 0, "", nil)
		}, true, "5 bytes after its message"},
		{"oversized", func(w http.ResponseWriter) { grpcReplyRaw(w, []byte{0, 0xff, 0xff, 0xff, 0xff}, "", 0, "", nil) },
			true, "gRPC response message of 4294967295 bytes, over the 4194304-byte limit"},
		{"compressed, unknown encoding", func(w http.ResponseWriter) { grpcReplyRaw(w, grpcFrame([]byte("x"), true), "snappy", 0, "", nil) },
			true, `compressed with "snappy", not gzip`},
		{"bad gzip", func(w http.ResponseWriter) { grpcReplyRaw(w, []byte{1, 0, 0, 0, 2, 'x', 'y'}, "gzip", 0, "", nil) },
			true, "gRPC response message: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newGRPCReceiver(t)
			rc.setAnswer(func(_ int, w http.ResponseWriter) bool {
				tc.answer(w)
				return false
			})
			s, err := NewSink(grpcOptions(rc))
			require.NoError(t, err)
			var reports reportLog
			h, err := s.NewHandler(&asyncbus.Options{OnError: reports.add})
			require.NoError(t, err)
			slog.New(h).Info("one", "seq", 0)
			flushErr := h.Flush()
			closeErr := h.Close()
			st := s.Stats()
			if tc.accepted {
				require.NoError(t, flushErr)
				require.NoError(t, closeErr)
				assert.EqualValues(t, 1, st.Sent)
				assert.Zero(t, st.FailedRecords)
				got := reports.all()
				require.Len(t, got, 1)
				assert.Contains(t, got[0].Error(), "the collector accepted 1 records (grpc-status 0), but its answer is unreadable: ")
				assert.Contains(t, got[0].Error(), tc.text)
				return
			}
			require.Error(t, flushErr)
			assert.Contains(t, flushErr.Error(), tc.text)
			assert.Equal(t, flushErr, closeErr, "Close reports the failed record too")
			assert.Zero(t, st.Sent)
			assert.EqualValues(t, 1, st.FailedRecords)
		})
	}
}

// TestGRPCNeedsHTTP2: a user's HTTPClient that speaks HTTP/1 to an HTTP/1
// server fails the batch with an error that says so, not retried.
func TestGRPCNeedsHTTP2(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "0")
	}))
	t.Cleanup(srv.Close)
	o := grpcOptions(&grpcReceiver{srv: srv})
	o.HTTPClient = srv.Client()
	requireFailsAtOnce(t, o, "gRPC needs HTTP/2; the answer came over HTTP/1.1 (200 OK)")
}

// requireFailsAtOnce logs one record through a Sink made with o and
// requires that it failed, unretried, with an error containing want.
func requireFailsAtOnce(t *testing.T, o Options, want string) {
	t.Helper()
	s, err := NewSink(o)
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	slog.New(h).Info("one")
	err = h.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.EqualValues(t, 1, s.Stats().FailedRecords)
	assert.Zero(t, s.Stats().Retries)
}

// TestGRPCServerWithoutH2IsPermanent: a TLS server that offers only
// HTTP/1.1 fails the batch at once, with an error that says why.
func TestGRPCServerWithoutH2IsPermanent(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the handshake failure is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	o := grpcOptions(&grpcReceiver{srv: srv})
	o.TLSConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	requireFailsAtOnce(t, o, "the collector offers no HTTP/2 over TLS (ALPN h2), which gRPC needs")
}

// TestGRPCNoGoroutinesLeftAfterClose: the Sink's HTTP/2 connection is
// closed with the handler.
func TestGRPCNoGoroutinesLeftAfterClose(t *testing.T) {
	rc := newGRPCReceiver(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h, err := NewHandler(grpcOptions(rc), nil)
	require.NoError(t, err)
	slog.New(h).Info("one", "seq", 0)
	require.NoError(t, h.Flush())
	slog.New(h).Info("two", "seq", 1)
	require.NoError(t, h.Close())
	requireEachOnce(t, rc.records(), 2)
}

// TestGRPCErrorText names the code, the class and the message.
func TestGRPCErrorText(t *testing.T) {
	assert.Equal(t, "otlpsink: collector answered gRPC status UNAVAILABLE (retryable): down",
		(&GRPCError{Code: 14, Message: "down"}).Error())
	assert.Equal(t, "otlpsink: collector answered gRPC status code 42 (permanent)",
		(&GRPCError{Code: 42, Permanent: true}).Error())
	assert.True(t, strings.HasPrefix(newGRPCError(8, "", 0).Error(), "otlpsink: collector answered gRPC status RESOURCE_EXHAUSTED (retryable)"))
}
