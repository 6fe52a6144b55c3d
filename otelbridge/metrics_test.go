package otelbridge

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/asyncbus/asyncbus"
)

// gatedWriter blocks every write until open is closed.
type gatedWriter struct{ open chan struct{} }

func (w gatedWriter) Write(p []byte) (int, error) {
	<-w.open
	return len(p), nil
}

// TestRegisterMetricsOccupancy: with the output held, the records logged
// stay in the ring and asyncbus.queue.occupancy is the bytes queued over
// the capacity; once the output takes them, it is 0.
func TestRegisterMetricsOccupancy(t *testing.T) {
	out := gatedWriter{open: make(chan struct{})}
	h := asyncbus.NewHandler(out, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 64 << 10}})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	_, err := RegisterMetrics(mp.Meter("asyncbus"), h)
	require.NoError(t, err)

	l := slog.New(h)
	for i := range 100 {
		l.Info("queued", "i", i, "pad", strings.Repeat("x", 100))
	}
	st := h.Stats() // nothing moves while the output is held
	require.Positive(t, st.QueueDepth)
	got := collectFloat(t, reader)
	assert.InDelta(t, float64(st.QueueDepth)/float64(st.Capacity), got[MetricOccupancy], 1e-12)
	assert.Greater(t, got[MetricOccupancy], 0.1, "100 records of ~170 bytes in 64 KiB")

	close(out.open)
	require.NoError(t, h.Close())
	assert.Equal(t, 0.0, collectFloat(t, reader)[MetricOccupancy])
}

// collectFloat returns the float64 gauges by name.
func collectFloat(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[float64]); ok {
				require.Len(t, g.DataPoints, 1, m.Name)
				out[m.Name] = g.DataPoints[0].Value
			}
		}
	}
	return out
}
