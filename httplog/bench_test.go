package httplog_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
)

// discardWriter is a reusable http.ResponseWriter that keeps nothing, so
// that the benchmark counts the middleware's cost and not a recorder's.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkRequest measures one request through a ServeMux route: bare,
// with the access record logged by hand (the same attributes, no request
// id, no response wrapper), then through the middleware logging to asyncbus (JSON into io.Discard)
// with a generated or a given request id.
func BenchmarkRequest(b *testing.B) {
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer h.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	logged := httplog.New(slog.New(h), nil)(mux)
	byHand := byHand(slog.New(h), mux)
	for _, bc := range []struct {
		name    string
		handler http.Handler
		id      string
	}{
		{"bare", mux, ""},
		{"by-hand", byHand, ""},
		{"httplog/generated-id", logged, ""},
		{"httplog/header-id", logged, "req-1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/users/7", nil)
			req.Header.Set("User-Agent", "bench/1")
			if bc.id != "" {
				req.Header.Set("X-Request-Id", bc.id)
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				bc.handler.ServeHTTP(w, req)
			}
		})
	}
}

// byHand logs the access record as a hand-written middleware would: the
// same attributes with constant status and size, for the baseline.
func byHand(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("http.request.method", r.Method), slog.String("http.route", r.Pattern),
			slog.String("url.path", r.URL.Path), slog.Int("http.response.status_code", 200),
			slog.Int64("http.response.body.size", 2),
			slog.Float64("http.server.request.duration", time.Since(start).Seconds()),
			slog.String("client.address", r.RemoteAddr), slog.String("user_agent.original", r.UserAgent()))
	})
}
