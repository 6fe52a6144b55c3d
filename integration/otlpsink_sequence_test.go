//go:build collector

package integration

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// TestOTLPSinkSequenceIntoCollector: with sequence numbers, the real
// Collector receiver decodes the attributes asyncbus.seq and asyncbus.run
// written in front of each LogRecord, beside the record's own attributes.
func TestOTLPSinkSequenceIntoCollector(t *testing.T) {
	sink := new(consumertest.LogsSink)
	url := startReceiver(t, sink)
	h, err := otlpsink.NewHandler(otlpsink.Options{Endpoint: url, Headers: map[string]string{}},
		&asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	const n = 200
	for i := range n {
		slog.New(h).Info("rec", "i", i)
	}
	require.NoError(t, h.Close())
	run := h.Stats().RunID
	recs := logRecords(sink)
	require.Len(t, recs, n)
	for i, r := range recs {
		assert.Equal(t, map[string]any{"asyncbus.seq": int64(i + 1), "asyncbus.run": run, "i": int64(i)}, r.Attributes().AsRaw())
		assert.Equal(t, "rec", r.Body().Str())
	}
}
