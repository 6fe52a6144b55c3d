package integration

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// switchWriter is an output that fails while failing is set.
type switchWriter struct {
	failing atomic.Bool
	mu      sync.Mutex
	buf     bytes.Buffer
}

var errOutputDown = errors.New("output down")

func (w *switchWriter) Write(p []byte) (int, error) {
	if w.failing.Load() {
		return 0, errOutputDown
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestPrometheusScrape exposes otelbridge.RegisterMetrics' instruments
// through the OTel Prometheus exporter on a promhttp endpoint, as a
// service would (see newMetricsEndpoint), scrapes /metrics and checks the
// handler's counters against what the test logged: 5 records written, 2
// failed, 1 refused after Close.
func TestPrometheusScrape(t *testing.T) {
	out := &switchWriter{}
	h := asyncbus.NewHandler(out, &asyncbus.Options{OnError: func(error) {}, Retry: asyncbus.RetryOptions{Attempts: 1}})
	srv := newMetricsEndpoint(t, h)

	log := slog.New(h)
	for i := range 5 {
		log.Info("written", "i", i)
	}
	log.Debug("below the level: not offered to the bus")
	require.NoError(t, h.Flush())
	out.failing.Store(true)
	log.Info("lost", "i", 5)
	log.Info("lost", "i", 6)
	require.ErrorIs(t, h.Flush(), errOutputDown)
	require.Error(t, h.Close())
	log.Info("after close") // refused: dropped, reason closed

	text := scrape(t, srv.URL+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, text)
	counter := func(name string, labels ...string) float64 {
		t.Helper()
		mf, ok := families[name]
		require.True(t, ok, "no %s in\n%s", name, text)
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels...) {
				return m.GetCounter().GetValue()
			}
		}
		t.Fatalf("no %s with labels %v in\n%s", name, labels, text)
		return 0
	}
	assert.Equal(t, 8.0, counter("asyncbus_records_enqueued_total"))
	assert.Equal(t, 5.0, counter("asyncbus_records_written_total"))
	assert.Equal(t, 2.0, counter("asyncbus_records_failed_total"))
	assert.Equal(t, 1.0, counter("asyncbus_records_dropped_total", "reason", "closed"))
	assert.Equal(t, 0.0, counter("asyncbus_records_dropped_total", "reason", "overflow"))
	assert.Equal(t, float64(out.buf.Len()), counter("asyncbus_written_bytes_total"))
	assert.Equal(t, dto.MetricType_GAUGE, families["asyncbus_queue_capacity_bytes"].GetType(), text)
	// The text itself, as Prometheus reads it.
	assert.Contains(t, text, "# TYPE asyncbus_records_written_total counter\n")
	assert.Regexp(t, `(?m)^asyncbus_records_written_total\{[^}]*otel_scope_name="asyncbus"[^}]*\} 5$`, text)
}

// newMetricsEndpoint is the wiring a service does: an OTel MeterProvider
// whose reader is the Prometheus exporter, registered on a registry that
// promhttp serves, and h's counters registered on a meter of it. The
// server, provider and registration end with the test.
func newMetricsEndpoint(t *testing.T, h *asyncbus.Handler) *httptest.Server {
	t.Helper()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { require.NoError(t, provider.Shutdown(t.Context())) })
	reg, err := otelbridge.RegisterMetrics(provider.Meter("asyncbus"), h)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, reg.Unregister()) })
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// scrape GETs url and returns the body in Prometheus's text format.
func scrape(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// hasLabels reports whether m has every name, value pair of labels.
func hasLabels(m *dto.Metric, labels ...string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
