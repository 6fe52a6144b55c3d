package httplog_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGroupFlightRecorder: with Group as the flight recorder's group, a
// failing request writes its own kept Debug records before its Error
// access record, and not those of another request.
func TestGroupFlightRecorder(t *testing.T) {
	var out bytes.Buffer
	h := asyncbus.NewHandler(&out, &asyncbus.Options{
		Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields, FlightRecorder: &asyncbus.FlightRecorder{Group: httplog.Group}},
	})
	logger := slog.New(h)
	srv := httptest.NewServer(httplog.New(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger.DebugContext(r.Context(), "step", "path", r.URL.Path)
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})))
	get(t, srv.URL+"/ok")
	resp, _ := get(t, srv.URL+"/fail", "X-Request-Id", "failing-1")
	require.Equal(t, 500, resp.StatusCode)
	srv.Close()
	require.NoError(t, h.Close())
	text := out.String()
	assert.NotContains(t, text, `"path":"/ok"`)
	step := strings.Index(text, `"msg":"step","request_id":"failing-1","path":"/fail"`)
	access := strings.Index(text, `"msg":"request"`+`,"http.request.method":"GET","url.scheme":"http","url.path":"/fail"`)
	require.GreaterOrEqual(t, step, 0, text)
	require.GreaterOrEqual(t, access, 0, text)
	assert.Less(t, step, access, text)
}

func TestGroup(t *testing.T) {
	_, ok := httplog.Group(context.Background())
	assert.False(t, ok)
	var ids [][16]byte
	srv := httptest.NewServer(httplog.New(slog.New(slog.DiscardHandler), nil)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		id, ok := httplog.Group(r.Context())
		assert.True(t, ok)
		ids = append(ids, id)
	})))
	get(t, srv.URL)
	get(t, srv.URL)
	srv.Close()
	require.Len(t, ids, 2)
	assert.NotEqual(t, ids[0], ids[1])
}
