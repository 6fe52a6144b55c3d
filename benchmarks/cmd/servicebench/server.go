package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/httplog"
)

// serverStats is what a server process reports on stderr when it stops.
type serverStats struct {
	Requests  uint64        `json:"requests"`
	Errors    uint64        `json:"errors"`     // Error records logged (every 1,000th request)
	CPU       time.Duration `json:"cpu"`        // user + system time of the load phase
	Wall      time.Duration `json:"wall"`       // from the first request to the stop signal
	P50       time.Duration `json:"p50"`        // per-request time spent in log calls (requests without an Error)
	P99       time.Duration `json:"p99"`        // ...
	P999      time.Duration `json:"p999"`       // ...
	Max       time.Duration `json:"max"`        // ...
	ErrP50    time.Duration `json:"err_p50"`    // the Error calls' own time
	ErrMax    time.Duration `json:"err_max"`    // ...
	Dropped   uint64        `json:"dropped"`    // asyncbus: records dropped (Drop mode)
	CloseTime time.Duration `json:"close_time"` // how long the handler's close took
}

// maxSamples bounds the per-request samples a server keeps (more requests
// are served, not sampled).
const maxSamples = 4 << 20

// service is the server's state: the logger and the per-request samples.
type service struct {
	log     *slog.Logger
	reqs    atomic.Uint64
	errs    atomic.Uint64
	samples []int64 // time in log calls of the requests without an Error
	first   atomic.Int64

	infoReqs   atomic.Uint64
	errSamples []int64 // the Error calls' own times

	byHand bool // the handler logs the access record itself; false: the httplog middleware does
}

// maxErrSamples bounds the Error calls sampled.
const maxErrSamples = 1 << 16

// access is the handler's response: a little JSON work per request.
type access struct {
	ID    uint64   `json:"id"`
	User  string   `json:"user"`
	Items []string `json:"items"`
	Total float64  `json:"total"`
}

var errUpstream = errors.New("upstream: connection reset by peer")

// ServeHTTP logs as a real service does: two disabled Debug calls, one
// Info from business logic, an Error every 1,000th request, and an access
// record at Info with 8 attributes (unless the httplog middleware writes
// it, with its own 9).
func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	n := s.reqs.Add(1)
	if n == 1 {
		s.first.Store(start.UnixNano())
	}
	ctx := r.Context()
	t := time.Now()
	s.log.DebugContext(ctx, "request received", "path", r.URL.Path, "query", r.URL.RawQuery)
	inLog := time.Since(t)
	resp := access{ID: n, User: "user-42", Items: []string{"apple", "pear", "plum"}, Total: 12.5 + float64(n%7)}
	body, _ := json.Marshal(resp)
	t = time.Now()
	s.log.InfoContext(ctx, "order priced", "user", resp.User, "items", len(resp.Items), "total", resp.Total)
	s.log.DebugContext(ctx, "cache lookup", "key", "price:42", "hit", true)
	isErr := n%1000 == 0
	if isErr {
		te := time.Now()
		s.log.ErrorContext(ctx, "inventory call failed", "err", errUpstream, "id", n)
		if i := s.errs.Add(1); i <= maxErrSamples {
			s.errSamples[i-1] = int64(time.Since(te))
		}
	}
	inLog += time.Since(t)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
	if s.byHand {
		t = time.Now()
		s.log.LogAttrs(ctx, slog.LevelInfo, "access",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", 200), slog.Int("bytes", len(body)),
			slog.Duration("dur", time.Since(start)), slog.String("remote", r.RemoteAddr),
			slog.String("ua", r.UserAgent()), slog.Uint64("req_id", n))
		inLog += time.Since(t)
	}
	if isErr {
		return // the Error calls are sampled on their own
	}
	if i := s.infoReqs.Add(1); i <= maxSamples {
		s.samples[i-1] = int64(inLog)
	}
}

// serve runs the server with backend on out (a path, or "-" for stdout):
// it prints "addr HOST:PORT" on stderr, serves until SIGTERM, then closes
// the handler and prints "stats {json}" on stderr.
func serve(backend, out string) error {
	f := os.Stdout
	if out != "-" {
		var err error
		if f, err = os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
	}
	writeProbe := startProbe(backend)
	handler, h, flush, err := newService(backend, f)
	if err != nil {
		return err
	}
	s := serviceOf(handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, stopSignal)
	fmt.Fprintf(os.Stderr, "addr %s\n", ln.Addr())
	<-stop
	st := s.stats(cpuTime())
	if writeProbe != nil {
		writeProbe()
	}
	_ = srv.Shutdown(context.Background())
	closeStart := time.Now()
	if flush != nil {
		_ = flush()
	}
	if ab, ok := h.(*asyncbus.Handler); ok {
		_ = ab.Close()
		bs := ab.Stats()
		st.Dropped = bs.Dropped
	} else if cl, ok := h.(io.Closer); ok {
		_ = cl.Close()
	}
	st.CloseTime = time.Since(closeStart)
	js, _ := json.Marshal(st)
	fmt.Fprintf(os.Stderr, "stats %s\n", js)
	return nil
}

// httplogSuffix, after a back end's name, has the httplog middleware
// write the access record instead of the handler.
const httplogSuffix = "+httplog"

// newService builds the service logging to the back end called backend
// on f: the HTTP handler to serve, the slog handler and the function that
// writes what it holds (nil if it holds nothing).
func newService(backend string, f *os.File) (http.Handler, slog.Handler, func() error, error) {
	name, viaMiddleware := strings.CutSuffix(backend, httplogSuffix)
	h, flush, err := newBackend(name, f)
	if err != nil {
		return nil, nil, nil, err
	}
	lh := h
	if os.Getenv(probeEnv) != "" {
		ab, _ := h.(*asyncbus.Handler)
		lh = probeHandler{next: h, ab: ab}
	}
	s := &service{log: slog.New(lh), samples: make([]int64, maxSamples), errSamples: make([]int64, maxErrSamples), byHand: !viaMiddleware}
	if viaMiddleware {
		return &logged{service: s, next: httplog.New(s.log, nil)(s)}, h, flush, nil
	}
	return s, h, flush, nil
}

// logged is the service behind the httplog middleware.
type logged struct {
	*service
	next http.Handler
}

func (l *logged) ServeHTTP(w http.ResponseWriter, r *http.Request) { l.next.ServeHTTP(w, r) }

// serviceOf returns the service that h serves.
func serviceOf(h http.Handler) *service {
	if l, ok := h.(*logged); ok {
		return l.service
	}
	return h.(*service)
}

// stats summarises the load phase, which ended now with cpu spent.
func (s *service) stats(cpu time.Duration) serverStats {
	n := s.reqs.Load()
	st := serverStats{Requests: n, Errors: s.errs.Load(), CPU: cpu}
	if first := s.first.Load(); first != 0 {
		st.Wall = time.Since(time.Unix(0, first))
	}
	st.P50, st.P99, st.P999, st.Max = quantiles(s.samples[:min(s.infoReqs.Load(), maxSamples)])
	st.ErrP50, _, _, st.ErrMax = quantiles(s.errSamples[:min(st.Errors, maxErrSamples)])
	return st
}

// quantiles sorts lat and returns its p50, p99, p99.9 and max.
func quantiles(lat []int64) (p50, p99, p999, maxi time.Duration) {
	if len(lat) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return time.Duration(lat[int(p*float64(len(lat)-1))]) }
	return q(0.50), q(0.99), q(0.999), time.Duration(lat[len(lat)-1])
}

// cores is the GOMAXPROCS a server runs with.
func cores(n int) {
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
}
