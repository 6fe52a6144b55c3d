package asyncbus

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDrainerStatsCountTheDrainer: DrainerStats counts the drainer's rounds
// and every call into the output, reports a batch target, and is the same
// snapshot from every handler derived from one NewHandler.
func TestDrainerStatsCountTheDrainer(t *testing.T) {
	var w countingWriter
	h := NewHandler(&w, &Options{Ring: RingOptions{BlockTimeout: time.Hour}}) // no write-through: the drainer writes
	assert.Zero(t, h.DrainerStats().WriteCalls, "nothing written yet")

	l := slog.New(h)
	const n = 5000
	for i := range n {
		l.Info("request handled", "seq", i)
	}
	require.NoError(t, h.Close())

	d := h.DrainerStats()
	assert.EqualValues(t, w.calls.Load(), d.WriteCalls, "every call into the output")
	assert.Positive(t, d.Batches)
	assert.LessOrEqual(t, d.Batches, d.WriteCalls, "a round that wrote made at least one call")
	assert.Positive(t, d.BatchTarget)

	tests := []struct {
		name string
		h    *Handler
	}{
		{"WithAttrs", h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).(*Handler)},
		{"WithGroup", h.WithGroup("g").(*Handler)},
		{"Named", h.Named("db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, d, tt.h.DrainerStats(), "shared with the root")
		})
	}
}
