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
// url.scheme ("http" or "https"), url.path, network.protocol.version ("1.1",
// "2"), http.response.status_code, http.response.body.size (bytes
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
// (ctxattrs.WithLevel), for the handler's records and for the request's own
// access record; it is nil by default, so no request can turn Debug on: a
// client able to do so could fill the output.
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
// than n, the left-most is taken. url.scheme is taken the same way: the
// proto of that Forwarded element or, without a Forwarded header, of
// X-Forwarded-Proto, when it is http or https; otherwise (and with no
// TrustedProxies) it is the scheme the server received, "https" over TLS.
//
// Panics in the handler are recovered and logged at Error with the panic
// value (exception.message) and the stack (exception.stacktrace). The
// client sees what net/http would show it, except that a panic before the
// handler wrote anything is answered 500:
//   - Nothing written yet: answered 500, and the record has status 500. An
//     invalid status code (WriteHeader below 100 or above 999) panics as
//     net/http's own writer does, before anything is written, so it is
//     answered 500 too.
//   - A header or part of the body written: the response is aborted (the
//     middleware panics with http.ErrAbortHandler once the record is
//     written), so the client sees an interrupted transfer (an unexpected
//     EOF over HTTP/1.1, a stream reset over HTTP/2), never a truncated body
//     ended cleanly. The record has the status the handler wrote, which
//     net/http may not have sent yet (it buffers), and error.type "aborted".
//   - With Options.Repanic the panic continues after the record is written,
//     and net/http logs it and drops the connection: nothing is answered,
//     and the record has error.type "aborted" and no status code unless the
//     handler wrote one.
//
// http.ErrAbortHandler is not recovered: the access record is written and
// the panic continues, so net/http aborts the response as the handler
// asked. The record of an aborted request carries error.type "aborted",
// at Warn at least (the client got no complete response, but the handler
// chose to abort: not a crash), and no status code when nothing was
// written (none was sent). A hijacked connection belongs to the handler:
// a panic after Hijack is recovered and logged, and the connection left
// as it is.
//
// Cost: through an asyncbus handler the middleware adds two allocations
// to a request (its per-request state and Request.WithContext's copy),
// three with a generated id. In a real server the id's response header
// costs net/http four more (the first entry of its header map, and the
// copy of the header it makes once a handler has called Header()), which
// a handler setting any response header of its own pays anyway: measured
// with net/http on loopback and the client in another process, a request
// with a generated id costs 3 allocations more through the middleware
// when the handler sets a header, 7 when it sets none.
//
// The response writer given to the handler keeps http.Flusher,
// http.Hijacker, io.ReaderFrom and io.StringWriter (so io.WriteString
// copies nothing), and Unwrap for http.ResponseController;
// informational (1xx) responses such as 100 Continue are passed on and not
// taken as the status. Flush and Hijack go through to the server's writer
// and return its error (http.ErrNotSupported where it has none, as for
// Hijack over HTTP/2). Requests whose path is in Options.SkipPaths are
// served untouched: no record, no request id, no panic recovery.
package httplog
