// The choice of protocol (OTLP/HTTP protobuf or OTLP/gRPC) and the gRPC
// endpoint, as Options.Protocol and the environment ask.

package otlpsink

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The protocols Options.Protocol accepts, by their OTel environment names.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// grpcExportPath is the HTTP/2 path of OTLP's logs Export method.
const grpcExportPath = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

// useGRPC reports whether the Sink speaks OTLP/gRPC: protocol, else
// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL (read
// with env), is "grpc"; empty means http/protobuf. "http/json" and any
// other value are errors naming where the value came from.
func useGRPC(protocol string, getenv func(string) string) (bool, error) {
	from := "Options.Protocol"
	if protocol == "" {
		protocol, from = envLookup(getenv, "PROTOCOL")
	}
	switch strings.ToLower(protocol) {
	case "", ProtocolHTTPProtobuf:
		return false, nil
	case ProtocolGRPC:
		return true, nil
	case "http/json":
		return false, fmt.Errorf("otlpsink: %s %q: OTLP/HTTP JSON is not supported; want grpc or http/protobuf", from, protocol)
	}
	return false, fmt.Errorf("otlpsink: %s %q: want grpc or http/protobuf", from, protocol)
}

// grpcURL returns the URL of the Export method (see Options.Endpoint for
// gRPC): endpoint, else OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else
// OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4317; the endpoint's path is
// ignored, as the SDK's otlploggrpc ignores it.
func grpcURL(endpoint string, insecure bool, getenv func(string) string) (string, error) {
	if endpoint == "" {
		endpoint, _ = envLookup(getenv, "ENDPOINT")
	}
	if endpoint == "" {
		endpoint = "localhost:4317"
	}
	u, _, err := httpEndpoint(endpoint, insecure)
	if err != nil {
		return "", fmt.Errorf("otlpsink: endpoint %q: %w", endpoint, err)
	}
	if u == nil {
		return "", fmt.Errorf("otlpsink: endpoint %q: want host:port or http(s)://host:port for gRPC", endpoint)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: grpcExportPath}).String(), nil
}

// grpcTransport makes tr speak only HTTP/2, as gRPC requires: negotiated
// with ALPN over TLS, and with prior knowledge (h2c) over plain TCP.
func grpcTransport(tr *http.Transport) {
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	tr.Protocols = &p
}
