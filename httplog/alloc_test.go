//go:build !race

// The race detector changes escape analysis: allocation counts are asserted
// only in the normal test run.

package httplog_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestAllocations: through an asyncbus handler, the middleware
// adds two allocations to a request's own (its per-request state and
// net/http's Request.WithContext copy), and a third for a generated id.
func TestRequestAllocations(t *testing.T) {
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer func() { require.NoError(t, h.Close()) }()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	logged := httplog.New(slog.New(h), nil)(mux)
	allocs := func(handler http.Handler, id string) float64 {
		req := httptest.NewRequest(http.MethodGet, "/users/7", nil)
		req.Header.Set("User-Agent", "test/1")
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		w := &discardWriter{h: http.Header{}}
		return testing.AllocsPerRun(1000, func() {
			clear(w.h)
			handler.ServeHTTP(w, req)
		})
	}
	bare := allocs(mux, "")
	assert.Equal(t, bare+2, allocs(logged, "req-1"), "id from the header")
	assert.Equal(t, bare+3, allocs(logged, ""), "id generated")
}
