package integration

import (
	"context"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// gatedOutput holds every write until open is closed.
type gatedOutput struct {
	open chan struct{}
	out  *switchWriter
}

func (g gatedOutput) Write(p []byte) (int, error) {
	<-g.open
	return g.out.Write(p)
}

// TestOperatorMetricsScrape is the recipe for an operator: the handler's
// instruments go through the OTel Prometheus exporter into
// controller-runtime's metrics.Registry, and the manager's own metrics
// server (the one mgr.Start runs, on a free port here) serves them on
// /metrics beside controller-runtime's. The scrape is checked while the
// output holds 40 records (occupancy above 0, nothing written) and after
// Close (40 written, occupancy 0); every asyncbus metric the docs' alert
// rules name is in it.
func TestOperatorMetricsScrape(t *testing.T) {
	exporter, err := otelprom.New(otelprom.WithRegisterer(metrics.Registry))
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { require.NoError(t, provider.Shutdown(context.Background())) })

	out := gatedOutput{open: make(chan struct{}), out: &switchWriter{}}
	h := asyncbus.NewHandler(out, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 64 << 10}})
	reg, err := otelbridge.RegisterMetrics(provider.Meter("asyncbus"), h)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, reg.Unregister()) })

	url := startManagerMetricsServer(t)
	log := slog.New(h)
	for i := range 40 {
		log.Info("reconciled", "i", i, "object", strings.Repeat("x", 200))
	}
	st := h.Stats() // nothing moves while the output is held
	held := scrapeFamilies(t, url)
	// Enqueued is estimated while records are queued (Stats); the per-level
	// count is exact at any time.
	assert.Equal(t, 40.0, held.value(t, "asyncbus_records_logged_total", "level", "info"))
	assert.Equal(t, 0.0, held.value(t, "asyncbus_records_written_total"))
	assert.InDelta(t, float64(st.QueueDepth)/float64(st.Capacity), held.value(t, "asyncbus_queue_occupancy_ratio"), 1e-9)
	assert.Greater(t, held.value(t, "asyncbus_queue_occupancy_ratio"), 0.1, "40 records of ~280 bytes in 64 KiB")

	close(out.open)
	require.NoError(t, h.Close())
	after := scrapeFamilies(t, url)
	assert.Equal(t, 40.0, after.value(t, "asyncbus_records_enqueued_total"))
	assert.Equal(t, 40.0, after.value(t, "asyncbus_records_written_total"))
	assert.Equal(t, 0.0, after.value(t, "asyncbus_records_failed_total"))
	assert.Equal(t, 0.0, after.value(t, "asyncbus_records_dropped_total", "reason", "overflow"))
	assert.Equal(t, 0.0, after.value(t, "asyncbus_queue_occupancy_ratio"))

	doc, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	named := regexp.MustCompile(`asyncbus_[a-z_]+`).FindAllString(string(doc), -1)
	require.NotEmpty(t, named)
	for _, name := range named {
		assert.Contains(t, after.text, "\n"+name, "docs/metrics.md names %s", name)
	}
}

// startManagerMetricsServer runs controller-runtime's metrics server, as
// the manager does, on a free local port until the test ends, and
// returns its /metrics URL.
func startManagerMetricsServer(t *testing.T) string {
	t.Helper()
	srv, err := metricsserver.NewServer(metricsserver.Options{BindAddress: "127.0.0.1:0"}, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	bound := srv.(interface{ GetBindAddr() string }) // the address it listens on, once it does
	require.Eventually(t, func() bool { return bound.GetBindAddr() != "" }, 30*time.Second, time.Millisecond)
	return "http://" + bound.GetBindAddr() + "/metrics"
}

// scraped is one scrape: the text and its parsed families.
type scraped struct {
	text     string
	families map[string]*dto.MetricFamily
}

func scrapeFamilies(t *testing.T, url string) scraped {
	t.Helper()
	text := scrape(t, url)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, text)
	return scraped{text: text, families: families}
}

// value is the counter's or gauge's value of name with labels.
func (s scraped) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mf, ok := s.families[name]
	require.True(t, ok, "no %s in\n%s", name, s.text)
	for _, m := range mf.GetMetric() {
		if hasLabels(m, labels...) {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s with labels %v in\n%s", name, labels, s.text)
	return 0
}
