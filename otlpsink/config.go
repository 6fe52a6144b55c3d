package otlpsink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options configures a Sink. Empty fields are taken from the standard
// OpenTelemetry environment variables, with the precedence of the OTel Go
// SDK's otlploghttp exporter: the logs-specific variable
// (OTEL_EXPORTER_OTLP_LOGS_*) before the generic one (OTEL_EXPORTER_OTLP_*),
// then the default.
type Options struct {
	// Endpoint is the collector's URL. With an empty path (or "/"),
	// "/v1/logs" is appended; any other path is used as given. Without a
	// scheme ("collector:4318") https is used, or http with Insecure.
	// Empty: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (used as given), else
	// OTEL_EXPORTER_OTLP_ENDPOINT with "/v1/logs" appended to its path,
	// else https://localhost:4318/v1/logs (http with Insecure).
	// With gRPC (Protocol), the endpoint is host:port or a URL whose path
	// is ignored, as the SDK's otlploggrpc ignores it; empty:
	// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT,
	// else localhost:4317.
	Endpoint string
	// Protocol is "http/protobuf" (OTLP/HTTP) or "grpc" (OTLP/gRPC, over
	// HTTP/2: TLS with ALPN, or unencrypted HTTP/2 with prior knowledge
	// for an http endpoint). Empty: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. "http/json" is not
	// supported: an error from New, as is any other value.
	Protocol string
	// Insecure selects http for an endpoint without a scheme. If false,
	// OTEL_EXPORTER_OTLP_LOGS_INSECURE / OTEL_EXPORTER_OTLP_INSECURE ("true")
	// may set it.
	Insecure bool
	// TLSConfig is used for https endpoints. Nil: Go's defaults, with the
	// certificates named by the environment, as the SDK reads them:
	// OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE, else OTEL_EXPORTER_OTLP_CERTIFICATE
	// (a PEM file of CA certificates that replaces the system roots), and
	// the client certificate and key for mutual TLS,
	// OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE / _CLIENT_KEY, else
	// OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE / _CLIENT_KEY (PEM files, both
	// or neither; the logs-specific pair if either of its variables is
	// set, else the generic one). They are read only for an https
	// endpoint. A file that cannot be read or parsed, or half a pair, is an
	// error from New naming the variable (the SDK reports it and connects
	// without), not a silent fall-back to other roots or to an anonymous
	// connection.
	TLSConfig *tls.Config
	// Headers are sent with every request. Nil: OTEL_EXPORTER_OTLP_LOGS_HEADERS,
	// else OTEL_EXPORTER_OTLP_HEADERS ("k=v,k2=v2", values percent-decoded).
	// A name or value net/http would refuse to send (a control character,
	// a name that is not a token) is an error from New naming the header.
	Headers map[string]string
	// Timeout bounds each request. Zero: OTEL_EXPORTER_OTLP_LOGS_TIMEOUT,
	// else OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds), else 10 s.
	Timeout time.Duration
	// Compression is "gzip" or "none". Empty: OTEL_EXPORTER_OTLP_LOGS_COMPRESSION,
	// else OTEL_EXPORTER_OTLP_COMPRESSION, else none.
	Compression string

	// Resource holds the resource attributes (service.name etc.). They are
	// added to, and override, those of OTEL_RESOURCE_ATTRIBUTES
	// ("k=v,k2=v2", values percent-decoded) and OTEL_SERVICE_NAME. Without
	// any service.name, "unknown_service:<executable>" is used, as the SDK does.
	Resource []slog.Attr
	// ScopeName names the instrumentation scope; empty means
	// "github.com/asyncbus/asyncbus/otlpsink".
	ScopeName string
	// ScopeVersion is the instrumentation scope's version; empty sends none.
	ScopeVersion string

	// RetryInitial is the first back-off after a retryable failure (429,
	// 502, 503, 504, a network error, or a retryable gRPC status: see
	// GRPCError); it doubles up to RetryMax, with jitter (each wait is
	// uniform in [d/2, d]). Zero means 1 s. A Retry-After header (over
	// gRPC, the delay of a RetryInfo detail) replaces the back-off for that
	// wait, capped at a minute or RetryMax, whichever is longer.
	RetryInitial time.Duration
	// RetryMax caps the back-off; zero means 30 s.
	RetryMax time.Duration
	// CloseTimeout bounds how long the handler's Close keeps retrying when
	// its context has no deadline; zero means 10 s. The records still
	// unsent then are counted as failed.
	CloseTimeout time.Duration
	// ReplayTimeout bounds the retries while records of an earlier process
	// are replayed from asyncbus.Options.Ring.File by NewHandler; zero
	// means 10 s. If the collector stays unreachable, NewHandler fails and
	// the records stay in the ring file for the next start.
	ReplayTimeout time.Duration
	// MaxRequestBytes caps the uncompressed size of one request; a drained
	// batch is split into several. Zero means 4 MiB, or over gRPC 4 MiB
	// less 64 KiB for the resource and framing (gRPC servers, the
	// Collector's included, refuse messages over 4 MiB by default). A
	// single record is always sent, whatever its size.
	MaxRequestBytes int
	// HTTPClient, if set, sends the requests (TLSConfig is then ignored).
	// With gRPC its transport must speak HTTP/2 (an answer over HTTP/1 is
	// a permanent error).
	HTTPClient *http.Client
}

// config is Options resolved against the environment.
type config struct {
	url     string
	grpc    bool // OTLP/gRPC rather than OTLP/HTTP (Options.Protocol)
	headers http.Header
	timeout time.Duration
	gzip    bool
	client  *http.Client
	// ownTransport is the transport resolve made for client (nil with
	// Options.HTTPClient): the Sink closes its idle connections when done.
	ownTransport *http.Transport
	resource     []slog.Attr
	scopeName    string
	scopeVer     string
	retryInit    time.Duration
	retryMax     time.Duration
	closeWait    time.Duration
	replayWait   time.Duration
	maxRequest   int
}

// resolve returns o with its empty fields taken from the environment (read
// with getenv) or the defaults, as Options describes, and the HTTP client
// to send with; an invalid option or variable is an error that names it.
func resolve(o Options, getenv func(string) string) (*config, error) {
	env := func(name string) string {
		v, _ := envLookup(getenv, name)
		return v
	}
	c := &config{
		timeout:    o.Timeout,
		retryInit:  o.RetryInitial,
		retryMax:   o.RetryMax,
		closeWait:  o.CloseTimeout,
		replayWait: o.ReplayTimeout,
		maxRequest: o.MaxRequestBytes,
		scopeName:  o.ScopeName,
		scopeVer:   o.ScopeVersion,
	}
	insecure := o.Insecure || strings.EqualFold(env("INSECURE"), "true")

	var err error
	if c.grpc, err = useGRPC(o.Protocol, getenv); err != nil {
		return nil, err
	}
	if c.grpc {
		c.url, err = grpcURL(o.Endpoint, insecure, getenv)
	} else {
		c.url, err = requestURL(o.Endpoint, insecure, getenv)
	}
	if err != nil {
		return nil, err
	}
	if c.headers, err = requestHeaders(o.Headers, env); err != nil {
		return nil, err
	}
	if c.timeout, err = requestTimeout(c.timeout, env); err != nil {
		return nil, err
	}
	if c.gzip, err = useGzip(o.Compression, env); err != nil {
		return nil, err
	}
	c.resource, err = resourceAttrs(o.Resource, getenv)
	if err != nil {
		return nil, err
	}
	c.setDefaults()
	c.client, c.ownTransport, err = newClient(o.HTTPClient, o.TLSConfig, c.url, getenv)
	if err != nil {
		return nil, err
	}
	if c.grpc && c.ownTransport != nil {
		grpcTransport(c.ownTransport)
	}
	return c, nil
}

// requestURL returns the URL to post to (see Options.Endpoint): endpoint,
// else OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as given, else
// OTEL_EXPORTER_OTLP_ENDPOINT with "/v1/logs" appended to its path, else
// localhost:4318 with "/v1/logs".
func requestURL(endpoint string, insecure bool, getenv func(string) string) (string, error) {
	switch {
	case endpoint != "":
		return endpointURL(endpoint, insecure, false)
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")) != "":
		return endpointURL(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")), insecure, true)
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "":
		ep, err := endpointURL(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), insecure, true)
		if err != nil {
			return "", err
		}
		u, _ := url.Parse(ep)
		u.Path = path.Join(u.Path, "/v1/logs") // as the SDK's convPath does
		return u.String(), nil
	}
	return endpointURL("localhost:4318", insecure, false)
}

// requestHeaders returns the headers to send with every request: own if
// not nil, else those of the HEADERS variables (read with env). A header
// net/http would refuse to send is an error (see checkHeader).
func requestHeaders(own map[string]string, env func(string) string) (http.Header, error) {
	headers := http.Header{}
	if own != nil {
		for k, v := range own {
			headers.Set(k, v)
		}
	} else if h := env("HEADERS"); h != "" {
		kv, err := parseKV(h)
		if err != nil {
			return nil, fmt.Errorf("otlpsink: OTEL_EXPORTER_OTLP_HEADERS: %w", err)
		}
		for _, p := range kv {
			headers.Set(p[0], p[1])
		}
	}

	for k, vs := range headers {
		if err := checkHeader(k, vs); err != nil {
			return nil, err
		}
	}
	return headers, nil
}

// requestTimeout returns the bound of each request: timeout if positive,
// else the milliseconds of the TIMEOUT variables (read with env), else
// 10 s. A variable that is not a positive integer is an error.
func requestTimeout(timeout time.Duration, env func(string) string) (time.Duration, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
		if t := env("TIMEOUT"); t != "" {
			ms, err := strconv.ParseInt(t, 10, 64)
			if err != nil || ms <= 0 {
				return 0, fmt.Errorf("otlpsink: OTEL_EXPORTER_OTLP_TIMEOUT %q: want a positive number of milliseconds", t)
			}
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return timeout, nil
}

// useGzip reports whether requests are gzipped: compression, else the
// COMPRESSION variables (read with env), in any case, is "gzip"; empty
// and "none" mean no compression, anything else is an error.
func useGzip(compression string, env func(string) string) (bool, error) {
	comp := strings.ToLower(compression)
	if comp == "" {
		comp = strings.ToLower(env("COMPRESSION"))
	}
	switch comp {
	case "", "none":
		return false, nil
	case "gzip":
		return true, nil
	}
	return false, fmt.Errorf("otlpsink: compression %q: want gzip or none", comp)
}

// setDefaults fills in the scope name, retry, wait and request size
// settings left zero (see Options), and raises retryMax to retryInit.
func (c *config) setDefaults() {
	if c.scopeName == "" {
		c.scopeName = "github.com/asyncbus/asyncbus/otlpsink"
	}
	if c.retryInit <= 0 {
		c.retryInit = time.Second
	}
	if c.retryMax <= 0 {
		c.retryMax = 30 * time.Second
	}
	c.retryMax = max(c.retryMax, c.retryInit)
	if c.closeWait <= 0 {
		c.closeWait = 10 * time.Second
	}
	if c.replayWait <= 0 {
		c.replayWait = 10 * time.Second
	}
	if c.maxRequest <= 0 {
		c.maxRequest = 4 << 20
		if c.grpc {
			c.maxRequest -= 64 << 10 // under grpc-go's default receive limit, 4 MiB with the resource and framing
		}
	}
}

// newClient returns the client to send with and, when it made it, its
// transport: client if not nil (no transport of its own), else a client on
// a clone of http.DefaultTransport with a clone of tlsConfig, or, if that
// is nil and reqURL is https, the TLS configuration of the certificate
// variables (see tlsFromEnv; their errors are returned).
func newClient(client *http.Client, tlsConfig *tls.Config, reqURL string, getenv func(string) string) (*http.Client, *http.Transport, error) {
	if client != nil {
		return client, nil, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig.Clone()
	} else if strings.HasPrefix(reqURL, "https:") {
		// The certificate variables only matter to a TLS connection: with
		// an http endpoint they are not read (they may be set for other
		// exporters), as the SDK never uses them there either.
		var err error
		tr.TLSClientConfig, err = tlsFromEnv(getenv)
		if err != nil {
			return nil, nil, err
		}
	}
	return &http.Client{Transport: tr}, tr, nil
}

// checkHeader reports a header that net/http would refuse to send (it
// fails every request, so no retry could cure it): a name that is not an
// RFC 9110 token, or a value with a control character other than tab.
func checkHeader(name string, values []string) error {
	if name == "" {
		return errors.New("otlpsink: header with an empty name")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenByte(name[i]) {
			return fmt.Errorf("otlpsink: header %q: invalid character %q in the name", name, name[i])
		}
	}
	for _, v := range values {
		for i := 0; i < len(v); i++ {
			if b := v[i]; (b < ' ' && b != '\t') || b == 0x7f {
				return fmt.Errorf("otlpsink: header %q: invalid character %q in the value", name, b)
			}
		}
	}
	return nil
}

// isTokenByte reports whether b may appear in an HTTP token (RFC 9110
// section 5.6.2), as net/http checks header names.
func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// envPrefixes are the prefixes of an exporter variable, in precedence
// order: the logs-specific one, then the generic one.
var envPrefixes = [...]string{"OTEL_EXPORTER_OTLP_LOGS_", "OTEL_EXPORTER_OTLP_"}

// envLookup returns the first non-empty of the variables envPrefixes+name,
// trimmed, and the variable it came from ("" and "" if none is set).
func envLookup(getenv func(string) string, name string) (value, from string) {
	for _, pre := range envPrefixes {
		if v := strings.TrimSpace(getenv(pre + name)); v != "" {
			return v, pre + name
		}
	}
	return "", ""
}

// tlsFromEnv builds the TLS configuration the certificate variables ask
// for (see Options.TLSConfig), or returns nil when none is set. Each error
// names the variable whose file is at fault.
func tlsFromEnv(getenv func(string) string) (*tls.Config, error) {
	ca, caVar := envLookup(getenv, "CERTIFICATE")
	// The client certificate and key are taken as a pair: the
	// logs-specific pair if either of its variables is set, else the
	// generic pair; never one of each. (The SDK takes the first complete
	// pair and skips half a pair silently; half a pair is an error here.)
	var cert, key, certVar, keyVar string
	for _, pre := range envPrefixes {
		c, k := strings.TrimSpace(getenv(pre+"CLIENT_CERTIFICATE")), strings.TrimSpace(getenv(pre+"CLIENT_KEY"))
		if c != "" || k != "" {
			cert, key, certVar, keyVar = c, k, pre+"CLIENT_CERTIFICATE", pre+"CLIENT_KEY"
			break
		}
	}
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("otlpsink: %s: %w", caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlpsink: %s %s: no PEM certificate in the file", caVar, ca)
		}
		cfg.RootCAs = pool
	}
	switch {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("otlpsink: %s and %s: %w", certVar, keyVar, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case cert != "":
		return nil, fmt.Errorf("otlpsink: %s is set without %s", certVar, keyVar)
	case key != "":
		return nil, fmt.Errorf("otlpsink: %s is set without %s", keyVar, certVar)
	}
	return cfg, nil
}

// httpEndpoint parses ep, prefixed with https:// (http:// when insecure)
// when it has no scheme, and returns it as schemed. u is nil, with no
// error, when the result is not an http(s) URL with a host; err is
// url.Parse's.
func httpEndpoint(ep string, insecure bool) (u *url.URL, schemed string, err error) {
	if !strings.Contains(ep, "://") {
		scheme := "https://"
		if insecure {
			scheme = "http://"
		}
		ep = scheme + ep
	}
	u, err = url.Parse(ep)
	if err != nil {
		return nil, ep, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, ep, nil
	}
	return u, ep, nil
}

// endpointURL turns an endpoint into the request URL (see Options.Endpoint).
// With asIs, the path is kept even when empty (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT).
func endpointURL(ep string, insecure, asIs bool) (string, error) {
	u, ep, err := httpEndpoint(ep, insecure)
	if err != nil {
		return "", fmt.Errorf("otlpsink: endpoint %q: %w", ep, err)
	}
	if u == nil {
		return "", fmt.Errorf("otlpsink: endpoint %q: want http(s)://host[:port][/path]", ep)
	}
	switch {
	case asIs && u.Path == "":
		u.Path = "/" // as the SDK's convPathExact does
	case !asIs && (u.Path == "" || u.Path == "/"):
		u.Path = "/v1/logs"
	}
	return u.String(), nil
}

// parseKV parses the W3C-baggage-like list the OTel environment variables
// use: "k=v,k2=v2", keys trimmed, values trimmed and percent-decoded.
func parseKV(s string) ([][2]string, error) {
	var out [][2]string
	for item := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid member %q: want key=value", item)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("invalid value in %q: %w", item, err)
		}
		out = append(out, [2]string{k, dv})
	}
	return out, nil
}

// resourceAttrs merges OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME and the
// caller's attributes, later ones overriding earlier ones by key, in first
// appearance order.
func resourceAttrs(own []slog.Attr, getenv func(string) string) ([]slog.Attr, error) {
	var out []slog.Attr
	set := func(a slog.Attr) {
		for i := range out {
			if out[i].Key == a.Key {
				out[i] = a
				return
			}
		}
		out = append(out, a)
	}
	if s := getenv("OTEL_RESOURCE_ATTRIBUTES"); strings.TrimSpace(s) != "" {
		kv, err := parseKV(s)
		if err != nil {
			return nil, fmt.Errorf("otlpsink: OTEL_RESOURCE_ATTRIBUTES: %w", err)
		}
		for _, p := range kv {
			set(slog.String(p[0], p[1]))
		}
	}
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		set(slog.String("service.name", s))
	}
	for _, a := range own {
		if a.Key == "" {
			return nil, errors.New("otlpsink: Options.Resource: attribute with an empty key")
		}
		set(a)
	}
	for _, a := range out {
		if a.Key == "service.name" {
			return out, nil
		}
	}
	exe, err := os.Executable()
	name := "unknown_service"
	if err == nil {
		name += ":" + filepath.Base(exe)
	}
	return append(out, slog.String("service.name", name)), nil
}
