package httplog_test

import (
	"bufio"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/asyncbustest"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreaming: a flushed chunk reaches the client while the handler is
// still running, with body capture on.
func TestStreaming(t *testing.T) {
	release := make(chan struct{})
	srv, rec := serve(t, &httplog.Options{BodyLimit: 4}, "/", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "second\n")
	})
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "first\n", line)
	close(release)
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(rest))
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(200), m["http.response.status_code"])
	assert.Equal(t, int64(13), m["http.response.body.size"])
	assert.Equal(t, "firs", m["http.response.body"], "a copy of the first bytes, the stream not held back")
}

// TestResponseController: deadlines and flushes through Unwrap.
func TestResponseController(t *testing.T) {
	srv, rec := serve(t, nil, "/", func(w http.ResponseWriter, _ *http.Request) {
		rc := http.NewResponseController(w)
		assert.NoError(t, rc.SetWriteDeadline(time.Now().Add(time.Minute)))
		assert.NoError(t, rc.EnableFullDuplex())
		assert.NoError(t, rc.Flush())
	})
	resp, _ := get(t, srv.URL)
	assert.Equal(t, 200, resp.StatusCode)
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(200), m["http.response.status_code"])
}

// TestWriteString: io.WriteString goes through the wrapper's WriteString,
// which counts the bytes and keeps the body's first bytes as Write does.
func TestWriteString(t *testing.T) {
	srv, rec := serve(t, &httplog.Options{BodyLimit: 4}, "/", func(w http.ResponseWriter, _ *http.Request) {
		sw, isSW := w.(io.StringWriter)
		require.True(t, isSW)
		n, err := sw.WriteString("hello")
		assert.NoError(t, err)
		assert.Equal(t, 5, n)
	})
	resp, got := get(t, srv.URL)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "hello", got)
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(200), m["http.response.status_code"])
	assert.Equal(t, int64(5), m["http.response.body.size"])
	assert.Equal(t, "hell", m["http.response.body"])
}

// TestReadFrom: io.Copy into the writer goes through ReadFrom and counts.
func TestReadFrom(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	srv, rec := serve(t, nil, "/", func(w http.ResponseWriter, _ *http.Request) {
		_, isRF := w.(io.ReaderFrom)
		assert.True(t, isRF)
		n, err := w.(io.ReaderFrom).ReadFrom(strings.NewReader(body))
		assert.NoError(t, err)
		assert.Equal(t, int64(len(body)), n)
	})
	_, got := get(t, srv.URL)
	assert.Equal(t, body, got)
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(len(body)), m["http.response.body.size"])
}

// TestHijack: an HTTP/1.1 handler takes the connection over; the record
// says so and has no status. The server's Close does not wait for a
// hijacked connection's handler: done does.
func TestHijack(t *testing.T) {
	rec := asyncbustest.NewRecorder()
	logged := httplog.New(slog.New(rec), nil)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
		require.NoError(t, brw.Flush())
	}))
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		logged.ServeHTTP(w, r)
	}))
	defer srv.Close()
	resp, _ := get(t, srv.URL)
	assert.Equal(t, 204, resp.StatusCode)
	<-done
	_, m := only(t, rec)
	assert.Equal(t, true, m["http.connection.hijacked"])
	assert.NotContains(t, m, "http.response.status_code")
}

// TestHTTP2: over HTTP/2 the record is written, streaming works, and
// Hijack reports http.ErrNotSupported.
func TestHTTP2(t *testing.T) {
	rec := asyncbustest.NewRecorder()
	srv := httptest.NewUnstartedServer(httplog.New(slog.New(rec), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, 2, r.ProtoMajor)
		_, _, err := w.(http.Hijacker).Hijack()
		assert.ErrorIs(t, err, http.ErrNotSupported)
		_, _ = io.WriteString(w, "h2")
		w.(http.Flusher).Flush()
	})))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, "h2", string(body))
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(200), m["http.response.status_code"])
	assert.Equal(t, int64(2), m["http.response.body.size"])
	assert.Equal(t, "2", m["network.protocol.version"])
	assert.Equal(t, "https", m["url.scheme"])
}

// TestExpectContinue: a request with Expect: 100-continue gets its 100
// when the handler reads the body, and the record has the final status.
func TestExpectContinue(t *testing.T) {
	srv, rec := serve(t, nil, "/", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(b)
	})
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("payload"))
	require.NoError(t, err)
	req.Header.Set("Expect", "100-continue")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, "payload", string(b))
	srv.Close()
	_, m := only(t, rec)
	assert.Equal(t, int64(202), m["http.response.status_code"])
}

// TestPanics: recovered panics, ErrAbortHandler and Repanic. An aborted
// response (the handler's ErrAbortHandler, a panic after writing, or
// Repanic) has error.type "aborted", at Warn at least, and no status code
// when nothing was written: the client got no response.
func TestPanics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      *httplog.Options
		handler   http.HandlerFunc
		status    int   // 0: the client sees the connection fail
		logged    int64 // http.response.status_code; 0: absent
		level     slog.Level
		stack     bool
		aborted   bool
		serverLog string
	}{
		{"before writing", nil, func(http.ResponseWriter, *http.Request) { panic("boom") }, 500, 500, slog.LevelError, true, false, ""},
		{"after writing", nil, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(202)
			w.(http.Flusher).Flush()
			panic("boom")
		}, 202, 202, slog.LevelError, true, true, ""},
		{"abort", nil, func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, 0, 0, slog.LevelWarn, false, true, ""},
		{"abort after writing", nil, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(202)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}, 202, 202, slog.LevelWarn, false, true, ""},
		{"abort after a 503", nil, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}, 503, 503, slog.LevelError, false, true, ""},
		{"repanic", &httplog.Options{Repanic: true}, func(http.ResponseWriter, *http.Request) { panic("boom") },
			0, 0, slog.LevelError, true, true, "panic serving"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := asyncbustest.NewRecorder()
			srv := httptest.NewUnstartedServer(httplog.New(slog.New(rec), tc.opts)(tc.handler))
			var serverLog strings.Builder
			srv.Config.ErrorLog = log.New(&serverLog, "", 0) // log.Logger serialises its writes
			srv.Start()
			defer srv.Close()
			resp, err := http.Get(srv.URL)
			if tc.status == 0 {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body) // an aborted body ends in an error
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, tc.status, resp.StatusCode)
			}
			srv.Close()
			r, m := only(t, rec)
			assert.Equal(t, tc.level, r.Level)
			assertFailureFields(t, m, tc.logged, tc.aborted)
			if tc.stack {
				assert.Equal(t, "boom", m["exception.message"])
				assert.Contains(t, m["exception.stacktrace"], "httplog_test.TestPanics")
			} else {
				assert.NotContains(t, m, "exception.stacktrace")
			}
			if tc.serverLog != "" {
				assert.Contains(t, serverLog.String(), tc.serverLog)
			} else {
				assert.Empty(t, serverLog.String())
			}
		})
	}
}
