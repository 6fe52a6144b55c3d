package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// The handler's counters on a Prometheus /metrics endpoint, through the
// OTel Prometheus exporter: the exporter is the MeterProvider's reader,
// registered on the registry that promhttp serves.
func Example_prometheus() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		panic(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer provider.Shutdown(context.Background())

	h := asyncbus.NewHandler(io.Discard, nil)
	defer h.Close()
	if _, err := otelbridge.RegisterMetrics(provider.Meter("asyncbus"), h); err != nil {
		panic(err)
	}
	// A service serves it with http.Handle("/metrics", promhttp.HandlerFor(...)).
	srv := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	defer srv.Close()

	log := slog.New(h)
	for i := range 3 {
		log.Info("request handled", "i", i)
	}
	if err := h.Flush(); err != nil {
		panic(err)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "asyncbus_records_") {
			fmt.Println(l)
		}
	}
	// Output:
	// asyncbus_records_dropped_total{reason="closed"} 0
	// asyncbus_records_dropped_total{reason="overflow"} 0
	// asyncbus_records_enqueued_total 3
	// asyncbus_records_failed_total 0
	// asyncbus_records_logged_total{level="debug"} 0
	// asyncbus_records_logged_total{level="error"} 0
	// asyncbus_records_logged_total{level="fatal"} 0
	// asyncbus_records_logged_total{level="info"} 3
	// asyncbus_records_logged_total{level="other"} 0
	// asyncbus_records_logged_total{level="trace"} 0
	// asyncbus_records_logged_total{level="warn"} 0
	// asyncbus_records_written_total 3
}
