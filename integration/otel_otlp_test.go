package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// fakeCollector is an httptest OTLP/HTTP logs endpoint that decodes every
// ExportLogsServiceRequest it receives.
type fakeCollector struct {
	srv  *httptest.Server
	mu   sync.Mutex
	recs []*logspb.LogRecord
	res  []*commonpb.KeyValue
	errs []error
}

func newFakeCollector() *fakeCollector {
	c := &fakeCollector{}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

func (c *fakeCollector) fail(w http.ResponseWriter, err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func (c *fakeCollector) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.fail(w, fmt.Errorf("unexpected request %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			c.fail(w, err)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		c.fail(w, err)
		return
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		c.fail(w, err)
		return
	}
	c.mu.Lock()
	for _, rl := range req.GetResourceLogs() {
		c.res = append(c.res, rl.GetResource().GetAttributes()...)
		for _, sl := range rl.GetScopeLogs() {
			c.recs = append(c.recs, sl.GetLogRecords()...)
		}
	}
	c.mu.Unlock()
	resp, err := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	if err != nil {
		c.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (c *fakeCollector) records() ([]*logspb.LogRecord, []*commonpb.KeyValue, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recs, c.res, c.errs
}

// otlpPipeline is the recommended production wiring: one slog.Logger whose
// MultiHandler writes every record to the local file through asyncbus (with
// trace correlation) and to an OTLP collector through otelslog → SDK batch
// processor → otlploghttp.
type otlpPipeline struct {
	logger *slog.Logger
	bus    *asyncbus.Handler
	lp     *sdklog.LoggerProvider
	file   *os.File
}

func newOTLPPipeline(ctx context.Context, endpoint, path string) (*otlpPipeline, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bus := asyncbus.NewHandler(f, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: otelbridge.TraceContext(otelbridge.StyleOTel)}})
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(endpoint+"/v1/logs"))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "checkout"))),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
	)
	otel := otelslog.NewHandler("checkout", otelslog.WithLoggerProvider(lp))
	return &otlpPipeline{logger: slog.New(slog.NewMultiHandler(bus, otel)), bus: bus, lp: lp, file: f}, nil
}

// close flushes and stops both paths: the SDK (exporting to the collector)
// and the bus (writing the file).
func (p *otlpPipeline) close(ctx context.Context) error {
	err1 := p.lp.Shutdown(ctx)
	err2 := p.bus.Close()
	err3 := p.file.Close()
	if err1 != nil {
		return err1
	}
	if err2 != nil {
		return err2
	}
	return err3
}

func spanContext() (context.Context, trace.Span) {
	tp := sdktrace.NewTracerProvider()
	return tp.Tracer("checkout").Start(context.Background(), "POST /orders")
}

func fileLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

func TestOTelOTLPToCollectorAndFile(t *testing.T) {
	col := newFakeCollector()
	defer col.srv.Close()
	path := filepath.Join(t.TempDir(), "app.log")
	p, err := newOTLPPipeline(context.Background(), col.srv.URL, path)
	require.NoError(t, err)

	ctx, span := spanContext()
	sc := span.SpanContext()
	p.logger.InfoContext(ctx, "order placed", "order_id", 42, slog.Group("customer", "tier", "gold"))
	p.logger.WarnContext(context.Background(), "no span")
	span.End()
	require.NoError(t, p.close(context.Background()))

	recs, res, errs := col.records()
	require.Empty(t, errs)
	require.Len(t, recs, 2)
	got := recs[0]
	assert.Equal(t, "order placed", got.GetBody().GetStringValue())
	assert.Equal(t, logspb.SeverityNumber_SEVERITY_NUMBER_INFO, got.GetSeverityNumber())
	assert.Equal(t, sc.TraceID(), trace.TraceID(got.GetTraceId()))
	assert.Equal(t, sc.SpanID(), trace.SpanID(got.GetSpanId()))
	attrs := map[string]*commonpb.AnyValue{}
	for _, kv := range got.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue()
	}
	assert.Equal(t, int64(42), attrs["order_id"].GetIntValue())
	require.NotNil(t, attrs["customer"].GetKvlistValue())
	assert.Equal(t, "gold", attrs["customer"].GetKvlistValue().GetValues()[0].GetValue().GetStringValue())
	assert.Equal(t, "no span", recs[1].GetBody().GetStringValue())
	assert.Empty(t, recs[1].GetTraceId())
	require.Len(t, res, 1)
	assert.Equal(t, "checkout", res[0].GetValue().GetStringValue())

	lines := fileLines(t, path)
	require.Len(t, lines, 2)
	assert.Equal(t, "order placed", lines[0]["msg"])
	assert.Equal(t, sc.TraceID().String(), lines[0]["trace_id"])
	assert.Equal(t, sc.SpanID().String(), lines[0]["span_id"])
	assert.Equal(t, 42.0, lines[0]["order_id"])
	assert.Equal(t, "no span", lines[1]["msg"])
	assert.NotContains(t, lines[1], "trace_id")
}

// Example_otlpCollector shows one slog.Logger feeding both the local file
// (asyncbus, with trace IDs) and an OpenTelemetry Collector (OTLP/HTTP); the
// collector here is a local stub decoding the protobuf requests.
func Example_otlpCollector() {
	col := newFakeCollector()
	defer col.srv.Close()
	dir, err := os.MkdirTemp("", "otlp-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.log")

	p, err := newOTLPPipeline(context.Background(), col.srv.URL, path)
	if err != nil {
		panic(err)
	}
	ctx, span := spanContext()
	p.logger.InfoContext(ctx, "order placed", "order_id", 42)
	span.End()
	if err := p.close(context.Background()); err != nil {
		panic(err)
	}

	recs, _, _ := col.records()
	data, _ := os.ReadFile(path)
	var line map[string]any
	_ = json.Unmarshal(bytes.TrimSpace(data), &line)
	want := span.SpanContext().TraceID()
	fmt.Println("collector:", recs[0].GetBody().GetStringValue(), trace.TraceID(recs[0].GetTraceId()) == want)
	fmt.Println("file:", line["msg"], line["trace_id"] == want.String())
	// Output:
	// collector: order placed true
	// file: order placed true
}
