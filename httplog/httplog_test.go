package httplog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/asyncbustest"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/asyncbus/asyncbus/logrbridge"
	"github.com/asyncbus/asyncbus/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve starts a test server running h through the middleware with opts,
// logging to a Recorder; the caller's done() closes it, which waits for
// every request's handler (and so its record) to finish.
func serve(t *testing.T, opts *httplog.Options, pattern string, h http.HandlerFunc) (*httptest.Server, *asyncbustest.Recorder) {
	t.Helper()
	rec := asyncbustest.NewRecorder()
	mux := http.NewServeMux()
	mux.Handle(pattern, h)
	srv := httptest.NewUnstartedServer(httplog.New(slog.New(rec), opts)(mux))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, rec
}

// get requests url with the header kv pairs and returns the response with
// its body read.
func get(t *testing.T, url string, kv ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// only returns the one record rec holds, as a map.
func only(t *testing.T, rec *asyncbustest.Recorder) (asyncbustest.Record, map[string]any) {
	t.Helper()
	recs := rec.Records()
	require.Len(t, recs, 1, "%v", recs)
	return recs[0], recs[0].Map()
}

// assertFailureFields checks the failure record's status code (absent
// when logged is 0) and its error.type "aborted" (absent unless aborted).
func assertFailureFields(t *testing.T, m map[string]any, logged int64, aborted bool) {
	t.Helper()
	if logged != 0 {
		assert.Equal(t, logged, m["http.response.status_code"])
	} else {
		assert.NotContains(t, m, "http.response.status_code")
	}
	if aborted {
		assert.Equal(t, "aborted", m["error.type"])
	} else {
		assert.NotContains(t, m, "error.type")
	}
}

func TestAccessRecord(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    *httplog.Options
		handler http.HandlerFunc
		status  int
		level   slog.Level
		size    int64
		route   any
	}{
		{"200 with body", nil, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") },
			200, slog.LevelInfo, 5, "GET /users/{id}"},
		{"nothing written", nil, func(http.ResponseWriter, *http.Request) {}, 200, slog.LevelInfo, 0, "GET /users/{id}"},
		{"404", nil, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) }, 404, slog.LevelWarn, 0, "GET /users/{id}"},
		{"503", nil, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) },
			503, slog.LevelError, 5, "GET /users/{id}"},
		{"1xx not the status", nil, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusCreated)
		}, 201, slog.LevelInfo, 0, "GET /users/{id}"},
		{"route func", &httplog.Options{Route: func(*http.Request) string { return "/users/:id" }},
			func(http.ResponseWriter, *http.Request) {}, 200, slog.LevelInfo, 0, "/users/:id"},
		{"level func", &httplog.Options{Level: func(int) slog.Level { return slog.LevelDebug - 4 }},
			func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, 500, slog.LevelDebug - 4, 0, "GET /users/{id}"},
		{"slow", &httplog.Options{Slow: time.Nanosecond},
			func(http.ResponseWriter, *http.Request) {}, 200, slog.LevelWarn, 0, "GET /users/{id}"},
		{"not slow", &httplog.Options{Slow: time.Hour},
			func(http.ResponseWriter, *http.Request) {}, 200, slog.LevelInfo, 0, "GET /users/{id}"},
		{"slow 5xx stays Error", &httplog.Options{Slow: time.Nanosecond},
			func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, 500, slog.LevelError, 0, "GET /users/{id}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, tc.opts, "GET /users/{id}", tc.handler)
			resp, _ := get(t, srv.URL+"/users/7", "User-Agent", "test-agent/1")
			require.Equal(t, tc.status, resp.StatusCode)
			srv.Close()
			r, m := only(t, rec)
			assert.Equal(t, "request", r.Message)
			assert.Zero(t, r.PC, "the caller would be the middleware, not the handler")
			assert.Equal(t, tc.level, r.Level)
			assert.Equal(t, "GET", m["http.request.method"])
			assert.Equal(t, tc.route, m["http.route"])
			assert.Equal(t, "/users/7", m["url.path"])
			assert.Equal(t, "http", m["url.scheme"])
			assert.Equal(t, "1.1", m["network.protocol.version"])
			assert.Equal(t, int64(tc.status), m["http.response.status_code"])
			assert.Equal(t, tc.size, m["http.response.body.size"])
			assert.Equal(t, "127.0.0.1", m["client.address"])
			assert.Equal(t, "test-agent/1", m["user_agent.original"])
			assert.Equal(t, resp.Header.Get("X-Request-Id"), m["request_id"])
			assert.Greater(t, m["http.server.request.duration"], 0.0)
		})
	}
}

func TestSkipPaths(t *testing.T) {
	srv, rec := serve(t, &httplog.Options{SkipPaths: []string{"/healthz"}}, "/", func(w http.ResponseWriter, _ *http.Request) {})
	resp, _ := get(t, srv.URL+"/healthz")
	assert.Empty(t, resp.Header.Get("X-Request-Id"))
	get(t, srv.URL+"/other")
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, "/other", m["url.path"])
}

func TestRequestIDFromHeader(t *testing.T) {
	for _, tc := range []struct {
		name, header, value string
		kept                bool
	}{
		{"default header", "X-Request-Id", "abc-123", true},
		{"too long", "X-Request-Id", strings.Repeat("a", 129), false},
		{"not printable", "X-Request-Id", "a b", false},
		{"other header ignored", "X-Other", "abc-123", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, nil, "/", func(http.ResponseWriter, *http.Request) {})
			resp, _ := get(t, srv.URL, tc.header, tc.value)
			srv.Close()
			_, m := only(t, rec)
			id := resp.Header.Get("X-Request-Id")
			assert.Equal(t, id, m["request_id"])
			if tc.kept {
				assert.Equal(t, tc.value, id)
			} else {
				assert.NotEqual(t, tc.value, id)
				assert.NotEmpty(t, id)
			}
		})
	}
}

func TestRequestIDOptions(t *testing.T) {
	srv, rec := serve(t, &httplog.Options{RequestIDHeader: "X-Trace", RequestIDKey: "rid"}, "/",
		func(http.ResponseWriter, *http.Request) {})
	resp, _ := get(t, srv.URL, "X-Trace", "t-1")
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, "t-1", resp.Header.Get("X-Trace"))
	assert.Equal(t, "t-1", m["rid"])
}

// TestRequestIDInEveryRecord: concurrent requests each log from several
// goroutines of their handler, through slog and through logr; every
// record carries its own request's id.
func TestRequestIDInEveryRecord(t *testing.T) {
	var out bytes.Buffer
	h := asyncbus.NewHandler(&out, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	logger := slog.New(h)
	lr := logrbridge.NewLogger(h)
	handler := func(w http.ResponseWriter, r *http.Request) {
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				logger.InfoContext(r.Context(), "slog", "want", r.Header.Get("X-Want"), "g", g)
				logrbridge.WithContext(lr, r.Context()).Info("logr", "want", r.Header.Get("X-Want"), "g", g)
			})
		}
		wg.Wait()
	}
	srv := httptest.NewServer(httplog.New(logger, nil)(http.HandlerFunc(handler)))
	const n = 20
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := range n {
		wg.Go(func() {
			resp, _ := get(t, srv.URL, "X-Want", fmt.Sprint(i))
			ids[i] = resp.Header.Get("X-Request-Id")
		})
	}
	wg.Wait()
	srv.Close()
	require.NoError(t, h.Close())
	counts := map[string]int{}
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		counts[m["msg"].(string)]++
		if m["msg"] == "request" {
			assert.Contains(t, ids, m["request_id"], line)
			assert.Equal(t, 1, strings.Count(line, `"request_id"`), "the access record carries its id once: %s", line)
			continue
		}
		var i int
		_, err := fmt.Sscan(m["want"].(string), &i)
		require.NoError(t, err)
		assert.Equal(t, ids[i], m["request_id"], line)
	}
	assert.Equal(t, map[string]int{"slog": 3 * n, "logr": 3 * n, "request": n}, counts)
	unique := map[string]bool{}
	for _, id := range ids {
		unique[id] = true
	}
	assert.Len(t, unique, n)
}

// TestRequestLevel: a request's Debug records are written only when
// Options.RequestLevel allows it; never by default.
func TestRequestLevel(t *testing.T) {
	allow := func(r *http.Request) (slog.Level, bool) {
		return slog.LevelDebug, r.Header.Get("X-Debug") == "secret"
	}
	for _, tc := range []struct {
		name  string
		opts  *httplog.Options
		token string
		debug bool
	}{
		{"default ignores the header", nil, "secret", false},
		{"allowed", &httplog.Options{RequestLevel: allow}, "secret", true},
		{"refused", &httplog.Options{RequestLevel: allow}, "guess", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			h := asyncbus.NewHandler(&out, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
			logger := slog.New(h)
			srv := httptest.NewServer(httplog.New(logger, tc.opts)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				logger.DebugContext(r.Context(), "detail")
			})))
			get(t, srv.URL, "X-Debug", tc.token)
			srv.Close()
			require.NoError(t, h.Close())
			assert.Equal(t, tc.debug, strings.Contains(out.String(), `"msg":"detail"`), out.String())
			assert.Contains(t, out.String(), `"msg":"request"`)
		})
	}
}

// TestSampling: the handler's Sampler thins successful requests' records
// while every 5xx record (at Error, exempt) is written.
func TestSampling(t *testing.T) {
	sampler, err := sampling.NewSampler(sampling.Config{Tick: time.Hour, First: 2})
	require.NoError(t, err)
	var out bytes.Buffer
	h := asyncbus.NewHandler(&out, &asyncbus.Options{Features: asyncbus.FeatureOptions{Sampler: sampler}})
	srv := httptest.NewServer(httplog.New(slog.New(h), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(500)
		}
	})))
	for range 5 {
		get(t, srv.URL+"/ok")
		get(t, srv.URL+"/fail")
	}
	srv.Close()
	require.NoError(t, h.Close())
	assert.Equal(t, 2, strings.Count(out.String(), `"url.path":"/ok"`), out.String())
	assert.Equal(t, 5, strings.Count(out.String(), `"url.path":"/fail"`), out.String())
}

// TestRequestLevelKeepsAccessRecord: a request whose level Options.RequestLevel
// lowered has its own access record written when the handler's level is
// above the record's, and only that request.
func TestRequestLevelKeepsAccessRecord(t *testing.T) {
	var out bytes.Buffer
	h := asyncbus.NewHandler(&out, &asyncbus.Options{Level: slog.LevelWarn})
	opts := &httplog.Options{RequestLevel: func(r *http.Request) (slog.Level, bool) {
		return slog.LevelDebug, r.Header.Get("X-Debug") == "secret"
	}}
	srv := httptest.NewServer(httplog.New(slog.New(h), opts)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	get(t, srv.URL+"/lowered", "X-Debug", "secret")
	get(t, srv.URL+"/plain")
	srv.Close()
	require.NoError(t, h.Close())
	assert.Equal(t, 1, strings.Count(out.String(), `"msg":"request"`), out.String())
	assert.Contains(t, out.String(), `"url.path":"/lowered"`)
}

// protocols are the ways the reference tests reach a server.
var protocols = []struct {
	name  string
	http2 bool
}{{"HTTP/1.1", false}, {"HTTP/2", true}}

// start starts h on a test server, HTTP/2 over TLS with http2, net/http's
// own error log (its panic reports) discarded.
func start(t *testing.T, h http.Handler, http2 bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// outcome is what an HTTP client receives for one request.
type outcome struct {
	status int    // 0: no response
	body   string // what was read of the body
	err    string // how the exchange failed, without the URL; "": it did not
}

// fetch requests srv's root with srv's own client and reads the whole body.
func fetch(t *testing.T, srv *httptest.Server) outcome {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		var ue *url.Error
		require.ErrorAs(t, err, &ue)
		return outcome{err: "no response: " + ue.Err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	o := outcome{status: resp.StatusCode, body: string(b)}
	if err != nil {
		o.err = "body cut: " + err.Error()
	}
	return o
}

// TestFailuresAsNetHTTP: a handler failing is seen by the client as it is
// without the middleware (net/http's own behaviour, HTTP/1.1 and HTTP/2),
// except where the middleware promises better (a 500 when nothing was
// written), and the record gives the status actually sent.
func TestFailuresAsNetHTTP(t *testing.T) {
	midBody := func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"items":[1,2,`)
		w.(http.Flusher).Flush()
		panic("boom")
	}
	boom := func(http.ResponseWriter, *http.Request) { panic("boom") }
	for _, tc := range []struct {
		name      string
		handler   http.HandlerFunc
		repanic   bool
		asNetHTTP bool  // the client sees what it sees without the middleware
		status    int   // else, the status it gets
		logged    int64 // http.response.status_code; 0: absent
		aborted   bool  // error.type "aborted"
		message   string
	}{
		{"status 0", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(0) }, false, false, 500, 500, false, "invalid WriteHeader code 0"},
		{"status 42", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(42) }, false, false, 500, 500, false, "invalid WriteHeader code 42"},
		{"status 1000", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(1000) }, false, false, 500, 500, false, "invalid WriteHeader code 1000"},
		{"panic before writing", boom, false, false, 500, 500, false, "boom"},
		{"panic mid-body", midBody, false, true, 0, 200, true, "boom"},
		{"panic after an unsent header", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("boom")
		}, false, true, 0, 202, true, "boom"},
		{"repanic before writing", boom, true, true, 0, 0, true, "boom"},
		{"repanic mid-body", midBody, true, true, 0, 200, true, "boom"},
	} {
		for _, proto := range protocols {
			t.Run(tc.name+"/"+proto.name, func(t *testing.T) {
				want := fetch(t, start(t, tc.handler, proto.http2))
				rec := asyncbustest.NewRecorder()
				srv := start(t, httplog.New(slog.New(rec), &httplog.Options{Repanic: tc.repanic})(tc.handler), proto.http2)
				got := fetch(t, srv)
				if tc.asNetHTTP {
					assert.Equal(t, want, got)
					assert.NotEmpty(t, got.err, "the client sees the failure")
				} else {
					assert.Equal(t, 0, want.status, "net/http answers nothing: %+v", want)
					assert.Equal(t, outcome{status: tc.status}, got)
				}
				srv.Close()
				r, m := only(t, rec)
				assert.Equal(t, slog.LevelError, r.Level)
				assertFailureFields(t, m, tc.logged, tc.aborted)
				assert.Equal(t, tc.message, m["exception.message"])
			})
		}
	}
}

// TestTruncatedBodyIsAnError: the reference cases of TestFailuresAsNetHTTP
// are the failures net/http documents: a body cut short ends in
// io.ErrUnexpectedEOF over HTTP/1.1 and in a stream reset over HTTP/2.
func TestTruncatedBodyIsAnError(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			rec := asyncbustest.NewRecorder()
			srv := start(t, httplog.New(slog.New(rec), nil)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"items":[1,2,`)
				w.(http.Flusher).Flush()
				panic("boom")
			})), proto.http2)
			resp, err := srv.Client().Get(srv.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			assert.Equal(t, `{"items":[1,2,`, string(b))
			if proto.http2 {
				assert.ErrorContains(t, err, "INTERNAL_ERROR")
			} else {
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			}
		})
	}
}
