package benchmarks

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	chihttplog "github.com/go-chi/httplog/v3"
	sloghttp "github.com/samber/slog-http"
)

// nopResponseWriter is a reusable http.ResponseWriter that keeps nothing,
// so that the benchmark counts the middleware's cost and not a recorder's.
type nopResponseWriter struct{ h http.Header }

func (w *nopResponseWriter) Header() http.Header         { return w.h }
func (w *nopResponseWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopResponseWriter) WriteHeader(int)             {}

// BenchmarkHTTPMiddleware measures one GET through a ServeMux route, bare
// and through each request logger, every one writing its access record to
// the same asyncbus handler (JSON into io.Discard): asyncbus's httplog,
// go-chi/httplog v3 (OTel schema, panics recovered) and samber/slog-http
// (request id, user agent and client IP on). A middleware's cost is its
// ns/op less bare's. cpu-ns/op is the process's CPU time (user+system,
// the drainer's included) per request: steadier than ns/op on a loaded
// machine.
func BenchmarkHTTPMiddleware(b *testing.B) {
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer h.Close()
	log := slog.New(h)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	samber := sloghttp.DefaultConfig()
	samber.WithUserAgent, samber.WithClientIP = true, true
	for _, bc := range []struct {
		name    string
		handler http.Handler
	}{
		{"bare", mux},
		{"asyncbus-httplog", httplog.New(log, nil)(mux)},
		{"chi-httplog", chihttplog.RequestLogger(log, &chihttplog.Options{
			Level: slog.LevelInfo, Schema: chihttplog.SchemaOTEL, RecoverPanics: true,
		})(mux)},
		{"samber-slog-http", sloghttp.Recovery(sloghttp.NewWithConfig(log, samber)(mux))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/users/7", nil)
			req.Header.Set("User-Agent", "bench/1")
			w := &nopResponseWriter{h: http.Header{}}
			b.ReportAllocs()
			cpu0 := cpuNow()
			for b.Loop() {
				clear(w.h)
				bc.handler.ServeHTTP(w, req)
			}
			b.ReportMetric(float64((cpuNow()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
