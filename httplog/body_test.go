package httplog_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBodies(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
		_, _ = io.WriteString(w, "!")
	}
	for _, tc := range []struct {
		name      string
		limit     int
		body      string
		req, resp any // nil: absent
	}{
		{"off by default", 0, "hello", nil, nil},
		{"under the limit", 10, "hello", "hello", "hello!"},
		{"cut at the limit", 3, "hello", "hel", "hel"},
		{"no request body", 10, "", nil, "!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, &httplog.Options{BodyLimit: tc.limit}, "/", echo)
			var body io.Reader = http.NoBody
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			resp, err := http.Post(srv.URL, "text/plain", body)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tc.body+"!", string(got))
			srv.Close()
			_, m := only(t, rec)
			assert.Equal(t, tc.req, m["http.request.body"])
			assert.Equal(t, tc.resp, m["http.response.body"])
		})
	}
}

// TestBodiesReplaceAttr: captured bodies pass through the handler's
// ReplaceAttr, so redaction applies to them.
func TestBodiesReplaceAttr(t *testing.T) {
	var out bytes.Buffer
	h := asyncbus.NewHandler(&out, &asyncbus.Options{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if strings.Contains(a.Value.String(), "hunter2") {
			return slog.String(a.Key, "[REDACTED]")
		}
		return a
	}})
	srv := httptest.NewServer(httplog.New(slog.New(h), &httplog.Options{BodyLimit: 100})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	})))
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("password=hunter2"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	srv.Close()
	require.NoError(t, h.Close())
	assert.Contains(t, out.String(), `"http.request.body":"[REDACTED]"`)
	assert.NotContains(t, out.String(), "hunter2")
}
