//go:build collector

// This test runs the OpenTelemetry Collector's own OTLP receiver in-process.
// It is behind the "collector" build tag (enabled by .ci/run) because the
// receiver pulls in a large dependency tree and opens a TCP listener.

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// startReceiver runs otlpreceiver (HTTP only) on a loopback port, delivering
// into sink, and returns its base URL.
func startReceiver(t *testing.T, sink *consumertest.LogsSink) string {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	addr := freeAddr(t)
	httpCfg := cfg.Protocols.HTTP.GetOrInsertDefault()
	httpCfg.ServerConfig.NetAddr.Endpoint = addr
	cfg.Protocols.HTTP = configoptional.Some(*httpCfg)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, rcv.Shutdown(context.Background())) })
	return "http://" + addr
}

// logRecords flattens everything the sink received.
func logRecords(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					out = append(out, sl.LogRecords().At(k))
				}
			}
		}
	}
	return out
}

// TestOTelCollectorReceiver sends slog records through the MultiHandler
// pipeline (asyncbus file + otelslog → batch processor → otlploghttp) into
// the real Collector receiver.
func TestOTelCollectorReceiver(t *testing.T) {
	sink := new(consumertest.LogsSink)
	url := startReceiver(t, sink)
	path := filepath.Join(t.TempDir(), "app.log")
	p, err := newOTLPPipeline(context.Background(), url, path)
	require.NoError(t, err)

	ctx, span := spanContext()
	const n = 50
	for i := range n {
		p.logger.InfoContext(ctx, "collected", "i", i)
	}
	span.End()
	require.NoError(t, p.close(context.Background()))

	recs := logRecords(sink)
	require.Len(t, recs, n)
	seen := map[int64]bool{}
	for _, r := range recs {
		assert.Equal(t, "collected", r.Body().Str())
		assert.Equal(t, [16]byte(span.SpanContext().TraceID()), [16]byte(r.TraceID()))
		v, ok := r.Attributes().Get("i")
		require.True(t, ok)
		seen[v.Int()] = true
	}
	assert.Len(t, seen, n)
	assert.Len(t, fileLines(t, path), n)
}

// TestOTelCollectorReceiverFromBridge closes the loop: records go from the
// OTel SDK into asyncbus through otelbridge.Processor and, from the same
// provider, to the Collector through the batch processor and otlploghttp.
func TestOTelCollectorReceiverFromBridge(t *testing.T) {
	sink := new(consumertest.LogsSink)
	url := startReceiver(t, sink)
	var buf syncBuf
	bus := asyncbus.NewHandler(&buf, nil)
	exp := mustOTLPExporter(t, url)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "bridge"))),
		sdklog.WithProcessor(otelbridge.NewProcessor(bus)),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
	)
	logger := slog.New(otelslogHandler(lp))
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: 1}))
	logger.WarnContext(ctx, "both ways", "k", "v")
	require.NoError(t, lp.Shutdown(context.Background()))
	require.NoError(t, bus.Close())

	recs := logRecords(sink)
	require.Len(t, recs, 1)
	assert.Equal(t, "both ways", recs[0].Body().Str())
	assert.Equal(t, [16]byte(tid), [16]byte(recs[0].TraceID()))
	lines := buf.lines(t)
	require.Len(t, lines, 1)
	assert.Equal(t, "both ways", lines[0]["msg"])
	assert.Equal(t, "WARN", lines[0]["level"])
	assert.Equal(t, tid.String(), lines[0]["trace_id"])
}

func mustOTLPExporter(t *testing.T, url string) *otlploghttp.Exporter {
	t.Helper()
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpointURL(url+"/v1/logs"))
	require.NoError(t, err)
	return exp
}

func otelslogHandler(lp *sdklog.LoggerProvider) slog.Handler {
	return otelslog.NewHandler("bridge", otelslog.WithLoggerProvider(lp))
}

// syncBuf is a bytes.Buffer safe for the bus's writer goroutine and the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}
