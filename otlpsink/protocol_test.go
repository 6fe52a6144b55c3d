package otlpsink

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestProtocolChoice: Options.Protocol, else the logs-specific variable,
// else the generic one, choose the protocol, each with its default port.
func TestProtocolChoice(t *testing.T) {
	const export = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
	for _, tc := range []struct {
		name string
		opt  Options
		env  map[string]string
		want string
	}{
		{"default is http/protobuf", Options{}, nil, "https://localhost:4318/v1/logs"},
		{"option grpc", Options{Protocol: "grpc"}, nil, "https://localhost:4317" + export},
		{"option grpc insecure", Options{Protocol: "grpc", Insecure: true}, nil, "http://localhost:4317" + export},
		{"option beats env", Options{Protocol: "http/protobuf"}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "grpc"}, "https://localhost:4318/v1/logs"},
		{"generic env", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "https://localhost:4317" + export},
		{"logs env wins", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf"}, "https://localhost:4318/v1/logs"},
		{"logs env wins the other way", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "GRPC"}, "https://localhost:4317" + export},
		{"grpc host:port", Options{Protocol: "grpc", Endpoint: "c:1234"}, nil, "https://c:1234" + export},
		{"grpc URL path ignored", Options{Protocol: "grpc", Endpoint: "http://c:1234/some/path"}, nil, "http://c:1234" + export},
		{"grpc insecure env", Options{Protocol: "grpc", Endpoint: "c:1"}, map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}, "http://c:1" + export},
		{"grpc logs endpoint env", Options{Protocol: "grpc"}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l:5", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:6"}, "http://l:5" + export},
		{"grpc generic endpoint env", Options{Protocol: "grpc"}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://g:6/"}, "https://g:6" + export},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolve(tc.opt, envOf(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.url)
			assert.Equal(t, tc.want != "https://localhost:4318/v1/logs", c.grpc)
		})
	}
}

func TestProtocolErrorsNameTheirSource(t *testing.T) {
	for _, tc := range []struct {
		opt  Options
		env  map[string]string
		want string
	}{
		{Options{Protocol: "http/json"}, nil, `otlpsink: Options.Protocol "http/json": OTLP/HTTP JSON is not supported; want grpc or http/protobuf`},
		{Options{}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json"}, `otlpsink: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL "http/json": OTLP/HTTP JSON is not supported`},
		{Options{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, `otlpsink: OTEL_EXPORTER_OTLP_PROTOCOL "thrift": want grpc or http/protobuf`},
		{Options{Protocol: "grpc", Endpoint: "ftp://c:1"}, nil, `otlpsink: endpoint "ftp://c:1": want host:port or http(s)://host:port for gRPC`},
	} {
		_, err := resolve(tc.opt, envOf(tc.env))
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestGRPCTransportSpeaksOnlyHTTP2: the Sink's own transport offers
// HTTP/2 over TLS and unencrypted HTTP/2, never HTTP/1.
func TestGRPCTransportSpeaksOnlyHTTP2(t *testing.T) {
	c, err := resolve(Options{Protocol: "grpc"}, envOf(nil))
	require.NoError(t, err)
	p := c.ownTransport.Protocols
	require.NotNil(t, p)
	assert.True(t, p.HTTP2())
	assert.True(t, p.UnencryptedHTTP2())
	assert.False(t, p.HTTP1())

	assert.Equal(t, 4<<20-64<<10, c.maxRequest, "under the 4 MiB gRPC servers accept by default")
	c, err = resolve(Options{}, envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, 4<<20, c.maxRequest)

	own := &http.Client{}
	c, err = resolve(Options{Protocol: "grpc", HTTPClient: own}, envOf(nil))
	require.NoError(t, err)
	assert.Same(t, own, c.client, "a user's client is used as it is")
}

// framedRecord is a record as the encoder frames it, size bytes in all.
func framedRecord(size int) []byte {
	payload := size - 1 - protowire.SizeVarint(uint64(size))
	for 1+protowire.SizeVarint(uint64(payload))+payload != size {
		payload++ // the length prefix shrank: one byte more of payload
	}
	r := protowire.AppendVarint([]byte{recordTag}, uint64(payload))
	return append(r, make([]byte, payload)...)
}

// TestGRPCDefaultRequestFitsServerLimit: a request filled to the default
// MaxRequestBytes, with a resource, is at most 4 MiB over gRPC (grpc-go's
// default receive limit), where the OTLP/HTTP default would overshoot.
func TestGRPCDefaultRequestFitsServerLimit(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTPProtobuf} {
		s, err := NewSink(Options{Protocol: protocol, Resource: []slog.Attr{slog.String("service.name", strings.Repeat("s", 200))}})
		require.NoError(t, err)
		room := s.cfg.maxRequest - len(s.scopePrefix)
		var recs [][]byte
		for room > 2000 {
			recs = append(recs, framedRecord(1000))
			room -= 1000
		}
		recs = append(recs, framedRecord(room)) // exactly to the limit
		require.Equal(t, len(recs), s.build(recs), "every record fits in one request")
		if protocol == ProtocolGRPC {
			assert.LessOrEqual(t, len(s.body), 4<<20)
		} else {
			assert.Greater(t, len(s.body), 4<<20, "the HTTP default is 4 MiB of records")
		}
	}
}
