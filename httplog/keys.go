package httplog

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// KeySet names the attribute keys of the access record.
type KeySet int

const (
	// OTelKeys are OpenTelemetry's HTTP semantic-convention keys (the
	// default): http.request.method, http.route, url.scheme ("http" or
	// "https"; see Options.TrustedProxies), url.path,
	// network.protocol.version ("1.0", "1.1", "2"),
	// http.response.status_code, http.response.body.size,
	// http.server.request.duration (seconds), client.address,
	// user_agent.original; a panic as exception.message and
	// exception.stacktrace.
	OTelKeys KeySet = iota
	// GCPKeys is Google Cloud Logging's httpRequest object (requestMethod,
	// requestUrl, status, responseSize, userAgent, remoteIp, latency,
	// protocol) and http.route beside it; a panic as error and
	// stack_trace, which Error Reporting reads.
	GCPKeys
	// ECSKeys are Elastic Common Schema fields: http.request.method,
	// http.route, url.path, http.response.status_code,
	// http.response.body.bytes, event.duration (nanoseconds), client.ip,
	// user_agent.original; a panic as error.message and error.stack_trace.
	ECSKeys
)

// maxAttrs is the most attributes an access record has (OTelKeys'
// eleven, the id, an abort's error.type, two bodies and two for a
// panic); they are built in an array of this size.
const maxAttrs = 17

// access is what the access record says of one request.
type access struct {
	r       *http.Request
	rw      *responseWriter
	d       time.Duration
	status  int // 0: none (a hijacked connection, an abort before any write)
	route   string
	client  string
	scheme  string
	aborted bool // the handler panicked with http.ErrAbortHandler
}

// otel appends the OTelKeys attributes to as.
func (a *access) otel(as []slog.Attr) []slog.Attr {
	as = append(as, slog.String("http.request.method", a.r.Method))
	if a.route != "" {
		as = append(as, slog.String("http.route", a.route))
	}
	as = append(as,
		slog.String("url.scheme", a.scheme),
		slog.String("url.path", a.r.URL.Path),
		slog.String("network.protocol.version", protocolVersion(a.r)))
	if a.rw.hijacked {
		as = append(as, slog.Bool("http.connection.hijacked", true))
	}
	if a.status != 0 {
		as = append(as, slog.Int("http.response.status_code", a.status))
	}
	as = append(as,
		slog.Int64("http.response.body.size", a.rw.bytes),
		slog.Float64("http.server.request.duration", a.d.Seconds()),
		slog.String("client.address", a.client))
	if ua := a.r.UserAgent(); ua != "" {
		as = append(as, slog.String("user_agent.original", ua))
	}
	return as
}

// protocolVersion returns r's HTTP version as the semantic conventions
// write it: "1.0", "1.1", "2", "3"; constants for these, so that no
// request allocates for it.
func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return "1.1"
	case r.ProtoMajor == 2 && r.ProtoMinor == 0:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	case r.ProtoMajor == 3 && r.ProtoMinor == 0:
		return "3"
	}
	return strconv.Itoa(r.ProtoMajor) + "." + strconv.Itoa(r.ProtoMinor)
}

// gcp appends the GCPKeys attributes to as.
func (a *access) gcp(as []slog.Attr) []slog.Attr {
	req := make([]slog.Attr, 0, 8)
	req = append(req, slog.String("requestMethod", a.r.Method), slog.String("requestUrl", a.r.URL.RequestURI()))
	if a.status != 0 {
		req = append(req, slog.Int("status", a.status))
	}
	req = append(req,
		slog.String("responseSize", strconv.FormatInt(a.rw.bytes, 10)), // LogEntry's int64 is a JSON string
		slog.String("userAgent", a.r.UserAgent()),
		slog.String("remoteIp", a.client),
		slog.String("latency", strconv.FormatFloat(a.d.Seconds(), 'f', 9, 64)+"s"),
		slog.String("protocol", a.r.Proto))
	as = append(as, slog.Attr{Key: "httpRequest", Value: slog.GroupValue(req...)})
	if a.route != "" {
		as = append(as, slog.String("http.route", a.route))
	}
	return as
}

// ecs appends the ECSKeys attributes to as.
func (a *access) ecs(as []slog.Attr) []slog.Attr {
	as = append(as, slog.String("http.request.method", a.r.Method))
	if a.route != "" {
		as = append(as, slog.String("http.route", a.route))
	}
	as = append(as, slog.String("url.path", a.r.URL.Path))
	if a.status != 0 {
		as = append(as, slog.Int("http.response.status_code", a.status))
	}
	as = append(as,
		slog.Int64("http.response.body.bytes", a.rw.bytes),
		slog.Int64("event.duration", a.d.Nanoseconds()),
		slog.String("client.ip", a.client))
	if ua := a.r.UserAgent(); ua != "" {
		as = append(as, slog.String("user_agent.original", ua))
	}
	return as
}

// panicAttrs returns the attributes of a recovered panic under ks.
func (ks KeySet) panicAttrs(p *panicInfo) []slog.Attr {
	msg, stack := "exception.message", "exception.stacktrace"
	switch ks {
	case GCPKeys:
		msg, stack = "error", "stack_trace"
	case ECSKeys:
		msg, stack = "error.message", "error.stack_trace"
	}
	return []slog.Attr{slog.String(msg, fmt.Sprint(p.value)), slog.String(stack, string(p.stack))}
}
