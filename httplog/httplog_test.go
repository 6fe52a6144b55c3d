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
