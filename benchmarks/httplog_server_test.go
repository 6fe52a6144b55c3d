package benchmarks

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	chihttplog "github.com/go-chi/httplog/v3"
	sloghttp "github.com/samber/slog-http"
)

// loadClientEnv names the environment variable that makes the test binary
// a load client of the server at its address (see TestMain);
// loadRequestsEnv holds how many requests it sends.
const (
	loadClientEnv   = "ASYNCBUS_BENCH_LOAD_ADDR"
	loadRequestsEnv = "ASYNCBUS_BENCH_LOAD_REQUESTS"
)

// serverWarmup is how many requests run before the measured ones: the
// connection's own allocations (its buffers, the TLS-less handshake's
// state) and the pools' first fills are not a request's.
const serverWarmup = 500

// runLoadClient sends the requests of loadRequestsEnv to addr one after
// the other over one kept-alive connection, reading every body: the
// server's allocations between two requests are then one request's.
func runLoadClient(addr string) error {
	n, err := strconv.Atoi(os.Getenv(loadRequestsEnv))
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for range n {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/users/7", nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "bench/1")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
	}
	return nil
}

// BenchmarkHTTPMiddlewareServer measures a request's allocations in a
// real server (net/http on loopback, the client a separate process, one
// kept-alive connection): runtime.MemStats of the server process, read
// when the measured requests start and when they are done, divided by
// their count. The handler writes "ok" with io.WriteString, bare
// ("writes") or after setting Content-Type ("sets-header"); each is run
// bare and through each request logger, logging to asyncbus (JSON into
// io.Discard). ns/op is a request's round trip between the processes.
func BenchmarkHTTPMiddlewareServer(b *testing.B) {
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer h.Close()
	logger := slog.New(h)
	samber := sloghttp.DefaultConfig()
	samber.WithUserAgent, samber.WithClientIP = true, true
	for _, hc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"writes", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }},
		{"sets-header", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "ok")
		}},
	} {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /users/{id}", hc.handler)
		for _, bc := range []struct {
			name    string
			handler http.Handler
		}{
			{"bare", mux},
			{"asyncbus-httplog", httplog.New(logger, nil)(mux)},
			{"chi-httplog", chihttplog.RequestLogger(logger, &chihttplog.Options{
				Level: slog.LevelInfo, Schema: chihttplog.SchemaOTEL, RecoverPanics: true,
			})(mux)},
			{"samber-slog-http", sloghttp.Recovery(sloghttp.NewWithConfig(logger, samber)(mux))},
		} {
			b.Run(hc.name+"/"+bc.name, func(b *testing.B) { serverAllocs(b, bc.handler) })
		}
	}
}

// serverAllocs serves b.N measured requests through handler to a load
// client in another process and reports the server's allocations per
// request (server-allocs/op, server-B/op) and the round trip (ns/op).
func serverAllocs(b *testing.B, handler http.Handler) {
	var (
		count      atomic.Int64
		start, end runtime.MemStats
		t0, t1     time.Time
	)
	n := int64(b.N)
	// The marks are read at the start of the first measured request and of
	// the one after the last: one connection serves one request at a time,
	// so exactly n requests' whole cycles (reading, handler, writing) lie
	// between them.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch count.Add(1) {
		case serverWarmup + 1:
			runtime.ReadMemStats(&start)
			t0 = time.Now()
		case serverWarmup + 1 + n:
			t1 = time.Now()
			runtime.ReadMemStats(&end)
		}
		handler.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	defer srv.Close()
	client := exec.Command(os.Args[0], "-test.run=^$")
	client.Env = append(os.Environ(),
		loadClientEnv+"="+srv.Listener.Addr().String(),
		loadRequestsEnv+"="+strconv.FormatInt(serverWarmup+1+n, 10))
	client.Stderr = os.Stderr
	b.ResetTimer()
	if err := client.Run(); err != nil {
		b.Fatalf("load client: %v", err)
	}
	b.StopTimer()
	b.ReportMetric(float64(end.Mallocs-start.Mallocs)/float64(n), "server-allocs/op")
	b.ReportMetric(float64(end.TotalAlloc-start.TotalAlloc)/float64(n), "server-B/op")
	b.ReportMetric(float64(t1.Sub(t0).Nanoseconds())/float64(n), "ns/op")
}
