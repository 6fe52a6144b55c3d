package httplog

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
)

// Options configures the middleware; the zero value (or nil) is usable.
type Options struct {
	// Message is the access record's message; "request" when empty.
	Message string
	// Route returns the route of a request, for routers other than
	// ServeMux; by default Request.Pattern (empty: no http.route).
	Route func(r *http.Request) string
	// RequestIDHeader is the request and response header holding the
	// request id; "X-Request-Id" when empty.
	RequestIDHeader string
	// RequestIDKey is the attribute key of the request id, in the access
	// record and in the context; "request_id" when empty.
	RequestIDKey string
	// Level returns the access record's level from the status; by default
	// 5xx Error, 4xx Warn, the rest Info.
	Level func(status int) slog.Level
	// Slow, when positive, raises requests that take longer to Warn at
	// least.
	Slow time.Duration
	// TrustedProxies is the number of proxies of yours in front of the
	// server; 0 (the default) trusts no Forwarded, X-Forwarded-For or
	// X-Forwarded-Proto header. See the package documentation.
	TrustedProxies int
	// SkipPaths are URL paths served without a record (health checks).
	SkipPaths []string
	// BodyLimit, when positive, adds to the access record the first
	// BodyLimit bytes of the request body the handler read
	// (http.request.body) and of the response body it wrote with Write
	// (http.response.body; not what it sent with ReadFrom), as strings.
	// They are copies: the response is never held back, streamed or not.
	// They pass through the handler's ReplaceAttr, and so its redaction.
	// Zero (the default): no bodies.
	BodyLimit int
	// Keys is the set of attribute keys of the access record; OTelKeys
	// (the default), GCPKeys or ECSKeys.
	Keys KeySet
	// RequestLevel, when set, may lower one request's level: when it
	// returns true, the records logged with the request's context, and
	// the request's access record, are written down to the level it
	// returns (ctxattrs.WithLevel). Nil (the
	// default) never does: a client able to turn Debug on can fill the
	// output, so allow it only on a proof the client cannot forge (a
	// secret token, an internal network).
	RequestLevel func(r *http.Request) (slog.Level, bool)
	// Repanic makes a recovered panic continue after its record is
	// written (net/http then logs it and drops the connection): no 500 is
	// answered, and the record has error.type "aborted" and no status code
	// unless the handler wrote one.
	Repanic bool
}

// middleware is the configured middleware: Options with defaults applied.
type middleware struct {
	log      *slog.Logger
	msg      string
	route    func(*http.Request) string
	idHeader string
	idKey    string
	level    func(int) slog.Level
	slow     time.Duration
	proxies  int
	skip     map[string]struct{}
	repanic  bool
	reqLevel func(*http.Request) (slog.Level, bool)
	keys     KeySet
	bodies   int
}

// New returns a middleware writing one record per request to log (the
// default logger when nil), configured by opts (nil: the defaults).
func New(log *slog.Logger, opts *Options) func(http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	if opts == nil {
		opts = &Options{}
	}
	m := &middleware{
		log: log, msg: opts.Message, route: opts.Route, idHeader: opts.RequestIDHeader,
		idKey: opts.RequestIDKey, level: opts.Level, slow: opts.Slow,
		proxies: opts.TrustedProxies, repanic: opts.Repanic, reqLevel: opts.RequestLevel, keys: opts.Keys, bodies: opts.BodyLimit,
	}
	if m.msg == "" {
		m.msg = "request"
	}
	if m.route == nil {
		m.route = func(r *http.Request) string { return r.Pattern }
	}
	if m.idHeader == "" {
		m.idHeader = "X-Request-Id"
	}
	m.idHeader = http.CanonicalHeaderKey(m.idHeader) // the form net/http keys its header maps by
	if m.idKey == "" {
		m.idKey = "request_id"
	}
	if m.level == nil {
		m.level = StatusLevel
	}
	if len(opts.SkipPaths) > 0 {
		m.skip = make(map[string]struct{}, len(opts.SkipPaths))
		for _, p := range opts.SkipPaths {
			m.skip[p] = struct{}{}
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serve(next, w, r) })
	}
}

// StatusLevel is the default Options.Level: 5xx Error, 4xx Warn, else Info.
func StatusLevel(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// serve serves one request through next and writes its record.
func (m *middleware) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if _, ok := m.skip[r.URL.Path]; ok {
		next.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	var id string
	if v := r.Header[m.idHeader]; len(v) > 0 { // Header.Get without its per-call canonicalization
		id = v[0]
	}
	id = requestID(id)
	st := &requestState{Context: r.Context(), rw: responseWriter{w: w}, group: newGroup()}
	st.idValue[0] = id
	w.Header()[m.idHeader] = st.idValue[:] // Header.Set without its allocation
	rw := &st.rw
	if m.reqLevel != nil {
		if l, ok := m.reqLevel(r); ok {
			// Under both views of the state: the handler's records and the
			// request's own access record are written down to l.
			st.Context = ctxattrs.WithLevel(st.Context, l)
		}
	}
	// The handler's context: the request's, its group (for the flight
	// recorder) and the id attribute. The access record's (outer) has no
	// id attribute: the record carries the id itself.
	st.attrs.Init(st.Context, slog.String(m.idKey, id))
	outer := (*recordContext)(st)
	inner := r.WithContext(st)
	if m.bodies > 0 {
		rw.body = &capture{limit: m.bodies}
		if r.Body != nil && r.Body != http.NoBody {
			inner.Body = &bodyReader{ReadCloser: r.Body, capture: capture{limit: m.bodies}}
		}
	}
	defer func() {
		p := recover()
		if p == nil {
			m.write(outer, inner, rw, id, start, nil)
			return
		}
		if p == http.ErrAbortHandler {
			m.write(outer, inner, rw, id, start, &panicInfo{aborted: true})
			panic(p)
		}
		// A panic. With nothing written it is answered 500 (with Repanic,
		// not at all: net/http drops the connection). With something
		// written (sent, or still in net/http's buffer) a 500 can no
		// longer replace it, and ending the response cleanly would pass a
		// truncated body for a whole one: it is aborted, as net/http
		// aborts it without the middleware, by http.ErrAbortHandler, which
		// net/http does not log again. A hijacked connection is the
		// handler's: left as it is.
		written := rw.wroteHeader || rw.hijacked
		if !written && !m.repanic {
			rw.WriteHeader(http.StatusInternalServerError)
		}
		abort := m.repanic || (written && !rw.hijacked)
		m.write(outer, inner, rw, id, start, &panicInfo{value: p, stack: debug.Stack(), aborted: abort})
		switch {
		case m.repanic:
			panic(p)
		case abort:
			panic(http.ErrAbortHandler)
		}
	}()
	next.ServeHTTP(rw, inner)
}

// requestState is what the middleware allocates per request, in one
// allocation: the request's context (embedded), the handler's context
// with its id attribute, the response wrapper, the group id and the id's
// response header value. As a context it is the handler's: the request's
// context with the group and the id attribute.
type requestState struct {
	context.Context                // the request's context, with its level when RequestLevel lowered it
	attrs           ctxattrs.Frame // the request's context with the id attribute
	rw              responseWriter
	group           [16]byte
	idValue         [1]string // the response header's value slice
}

// Value returns the request's group id for the group key, else what the
// request's context with the id attribute holds.
func (st *requestState) Value(key any) any {
	if key == (groupKey{}) {
		return &st.group
	}
	return st.attrs.Value(key)
}

// recordContext is requestState as the access record's context: the
// request's context with its group, without the id attribute.
type recordContext requestState

// Value returns the request's group id for the group key, else what the
// request's context holds.
func (c *recordContext) Value(key any) any {
	if key == (groupKey{}) {
		return &c.group
	}
	return c.Context.Value(key)
}

// panicInfo is how the handler ended other than by returning: a
// recovered panic's value and the stack where it was recovered (none for
// http.ErrAbortHandler), and whether the response was aborted (the
// client got no complete response).
type panicInfo struct {
	value   any
	stack   []byte
	aborted bool
}

// recovered reports whether p is a panic other than http.ErrAbortHandler.
func (p *panicInfo) recovered() bool { return p != nil && p.stack != nil }

// write logs the access record of r, served through rw, with ctx (the
// request's context with its group and its level, without the id
// attribute).
func (m *middleware) write(ctx context.Context, r *http.Request, rw *responseWriter, id string, start time.Time, p *panicInfo) {
	end := time.Now()
	a := access{r: r, rw: rw, d: end.Sub(start), status: rw.status, aborted: p != nil && p.aborted}
	if a.status == 0 && !rw.hijacked && !a.aborted {
		a.status = http.StatusOK // the handler wrote nothing: net/http answers 200
	}
	level := m.level(a.status)
	if m.slow > 0 && a.d > m.slow && level < slog.LevelWarn {
		level = slog.LevelWarn
	}
	switch {
	case p.recovered():
		level = slog.LevelError
	case a.aborted:
		level = max(level, slog.LevelWarn)
	}
	h := m.log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	a.route = m.route(r)
	a.client = clientAddress(r, m.proxies)
	a.scheme = scheme(r, m.proxies)
	if ah, ok := h.(*asyncbus.Handler); ok {
		// A pooled buffer, not one on the stack: the attributes reach the
		// handler's encoder and hooks through interfaces, which escape
		// analysis cannot see into, so a stack buffer would be moved to
		// the heap.
		buf := attrBufs.Get().(*[maxAttrs]slog.Attr)
		as := m.attrs(buf[:0], &a, id, p)
		_ = ah.HandleAttrs(ctx, end, level, m.msg, as) // as slog.Logger does, a handler's error is not reported here
		clear(buf[:])                                  // drop the references the attributes held
		attrBufs.Put(buf)
		return
	}
	var buf [maxAttrs]slog.Attr
	// pc 0: the record's source would be this package, not the handler.
	rec := slog.NewRecord(end, level, m.msg, 0)
	rec.AddAttrs(m.attrs(buf[:0], &a, id, p)...)
	_ = h.Handle(ctx, rec) // as slog.Logger does, a handler's error is not reported here
}

// attrBufs holds the attribute arrays of access records handed to an
// asyncbus handler.
var attrBufs = sync.Pool{New: func() any { return new([maxAttrs]slog.Attr) }}

// attrs appends the access record's attributes to as: the key set's, the
// request id, the bodies and the panic.
func (m *middleware) attrs(as []slog.Attr, a *access, id string, p *panicInfo) []slog.Attr {
	switch m.keys {
	case GCPKeys:
		as = a.gcp(as)
	case ECSKeys:
		as = a.ecs(as)
	default:
		as = a.otel(as)
	}
	as = append(as, slog.String(m.idKey, id))
	if a.aborted {
		as = append(as, slog.String("error.type", "aborted"))
	}
	if a.rw.body != nil {
		if b, ok := a.r.Body.(*bodyReader); ok {
			as = append(as, slog.String("http.request.body", string(b.buf)))
		}
		as = append(as, slog.String("http.response.body", string(a.rw.body.buf)))
	}
	if p.recovered() {
		as = append(as, m.keys.panicAttrs(p)...)
	}
	return as
}
