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
// net/http's Request.WithContext copy), and a third for a generated id;
// with a server writer that has WriteString (net/http's has), the
// handler's io.WriteString keeps its copy-free path through the wrapper.
func TestRequestAllocations(t *testing.T) {
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer func() { require.NoError(t, h.Close()) }()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	logged := httplog.New(slog.New(h), nil)(mux)
	for _, tc := range []struct {
		name string
		w    func() http.ResponseWriter
	}{
		{"Write only", func() http.ResponseWriter { return &discardWriter{h: http.Header{}} }},
		{"WriteString", func() http.ResponseWriter { return &discardStringWriter{discardWriter{h: http.Header{}}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allocs := func(handler http.Handler, id string) float64 {
				req := httptest.NewRequest(http.MethodGet, "/users/7", nil)
				req.Header.Set("User-Agent", "test/1")
				if id != "" {
					req.Header.Set("X-Request-Id", id)
				}
				w := tc.w()
				return testing.AllocsPerRun(1000, func() {
					clear(w.Header())
					handler.ServeHTTP(w, req)
				})
			}
			bare := allocs(mux, "")
			assert.Equal(t, bare+2, allocs(logged, "req-1"), "id from the header")
			assert.Equal(t, bare+3, allocs(logged, ""), "id generated")
		})
	}
}

// discardStringWriter is discardWriter with WriteString, as net/http's
// response writer has.
type discardStringWriter struct{ discardWriter }

func (w *discardStringWriter) WriteString(s string) (int, error) { return len(s), nil }
