package httplog_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeySets(t *testing.T) {
	ok := func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(201)
		_, _ = io.WriteString(w, "abc")
	}
	boom := func(http.ResponseWriter, *http.Request) { panic("boom") }
	for _, tc := range []struct {
		name    string
		keys    httplog.KeySet
		handler http.HandlerFunc
		want    map[string]any // values; nil: present, any value
	}{
		{"ECS", httplog.ECSKeys, ok, map[string]any{
			"http.request.method": "GET", "http.route": "/items/", "url.path": "/items/9",
			"http.response.status_code": int64(201), "http.response.body.bytes": int64(3),
			"event.duration": nil, "client.ip": "127.0.0.1", "user_agent.original": "ua/1", "request_id": "r-9",
		}},
		{"ECS panic", httplog.ECSKeys, boom, map[string]any{
			"http.response.status_code": int64(500), "error.message": "boom", "error.stack_trace": nil,
		}},
		{"GCP panic", httplog.GCPKeys, boom, map[string]any{"error": "boom", "stack_trace": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, &httplog.Options{Keys: tc.keys}, "/items/", tc.handler)
			get(t, srv.URL+"/items/9", "User-Agent", "ua/1", "X-Request-Id", "r-9")
			srv.Close()
			_, m := only(t, rec)
			for k, v := range tc.want {
				require.Contains(t, m, k)
				if v != nil {
					assert.Equal(t, v, m[k], k)
				}
			}
			assert.NotContains(t, m, "exception.message")
		})
	}
}

func TestGCPHTTPRequest(t *testing.T) {
	srv, rec := serve(t, &httplog.Options{Keys: httplog.GCPKeys}, "GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(404)
		_, _ = io.WriteString(w, "none")
	})
	get(t, srv.URL+"/items/9?x=1", "User-Agent", "ua/1")
	srv.Close()
	r, m := only(t, rec)
	assert.Equal(t, slog.LevelWarn, r.Level)
	assert.Equal(t, "GET /items/{id}", m["http.route"])
	hr, isMap := m["httpRequest"].(map[string]any)
	require.True(t, isMap, "%v", m)
	assert.Regexp(t, `^[0-9]+\.[0-9]{9}s$`, hr["latency"])
	delete(hr, "latency")
	assert.Equal(t, map[string]any{
		"requestMethod": "GET", "requestUrl": "/items/9?x=1", "status": int64(404), "responseSize": "4",
		"userAgent": "ua/1", "remoteIp": "127.0.0.1", "protocol": "HTTP/1.1",
	}, hr)
}
