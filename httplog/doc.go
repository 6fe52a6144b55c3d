// Package httplog is a net/http middleware that writes one record per
// request, when the response is done, with OpenTelemetry's HTTP
// semantic-convention keys:
//
//	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
//	mux := http.NewServeMux()
//	mux.HandleFunc("GET /users/{id}", getUser)
//	srv := &http.Server{Handler: httplog.New(slog.New(h), nil)(mux)}
//
// The record is logged with the message "request" and carries
// http.request.method, http.route (the ServeMux pattern, or Options.Route),
// url.path, http.response.status_code, http.response.body.size (bytes
// written), http.server.request.duration (seconds), client.address,
// user_agent.original and request_id. Options.Keys selects Google Cloud
// Logging's httpRequest object (GCPKeys) or Elastic Common Schema fields
// (ECSKeys) instead.
//
// Request id: taken from the request header Options.RequestIDHeader
// ("X-Request-Id" by default) when it holds 1 to 128 printable ASCII
// characters, otherwise generated (a random per-process prefix and a
// counter: unique per process and boot); a client can so choose its id,
// so name a header your proxy sets if that matters. It is set on the response under
// the same header and carried in the request's context with ctxattrs, so
// every record logged with that context while serving the request carries
// it, when the handler writes ctxattrs.Fields (asyncbus.Options.Features.Context);
// logr loggers get it through logrbridge.WithContext.
//
// Level: 5xx at Error, 4xx at Warn, the rest at Info (Options.Level
// replaces this); a request slower than Options.Slow is at Warn at least.
//
// Per-request debug: Options.RequestLevel may lower one request's level
// (ctxattrs.WithLevel); it is nil by default, so no request can turn Debug
// on: a client able to do so could fill the output.
//
// Flight recorder per request: with asyncbus.FlightRecorder{Group: Group},
// a request's Error (a 5xx or a panic) writes the Debug records kept for
// that request before it, and no other request's.
//
// Bodies: off by default; Options.BodyLimit adds copies of the first bytes
// of the request and response bodies, which pass through the handler's
// ReplaceAttr (its redaction) like any attribute.
//
// Sampling: the access record goes through the handler's Sampler like any
// record; a sampling.Sampler, which exempts Error by default, thins
// successful requests and keeps every 5xx.
//
// Client address: the peer's address (Request.RemoteAddr) unless
// Options.TrustedProxies is set. Forwarded and X-Forwarded-For are written
// by clients too: only the addresses your own proxies append can be
// trusted. With TrustedProxies n, the n-th address from the right of the
// Forwarded header (or, without one, of X-Forwarded-For) is taken: the
// client as seen by the outermost of your n proxies. With fewer addresses
// than n, the left-most is taken.
//
// Panics in the handler are recovered, logged at Error with the panic
// value (exception.message) and the stack (exception.stacktrace), and
// answered with 500 when the handler had written nothing yet; with
// Options.Repanic the panic continues after the record is written.
// http.ErrAbortHandler is not recovered: the access record is written and
// the panic continues, so net/http aborts the response as the handler
// asked. The record of an aborted request carries error.type "aborted",
// at Warn at least (the client got no complete response, but the handler
// chose to abort: not a crash), and no status code when nothing was
// written (none was sent).
//
// The response writer given to the handler keeps http.Flusher,
// http.Hijacker and io.ReaderFrom, and Unwrap for http.ResponseController;
// informational (1xx) responses such as 100 Continue are passed on and not
// taken as the status. Flush and Hijack go through to the server's writer
// and return its error (http.ErrNotSupported where it has none, as for
// Hijack over HTTP/2). Requests whose path is in Options.SkipPaths are
// served untouched: no record, no request id, no panic recovery.
package httplog
