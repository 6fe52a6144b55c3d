//go:build !race

// The race detector changes escape analysis: allocation counts are asserted
// only in the normal test run.

package sampling_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/sampling"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllocations: deciding allocates nothing, whether the record is kept
// (then the wrapped asyncbus handler allocates nothing either) or dropped
// (after the first drop of the key, which publishes its name).
func TestAllocations(t *testing.T) {
	ab := asyncbus.NewHandler(io.Discard, nil)
	defer func() { require.NoError(t, ab.Close()) }()
	ctx := context.Background()
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.Int("status", 200))

	keepAll, err := sampling.NewHandler(ab, sampling.Config{First: math.MaxInt32})
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(500, func() { _ = keepAll.Handle(ctx, r) }), "kept")

	dropAll, err := sampling.NewHandler(ab, sampling.Config{First: 1})
	require.NoError(t, err)
	_ = dropAll.Handle(ctx, r)
	_ = dropAll.Handle(ctx, r) // first drop: publishes the key for the marker
	assert.Zero(t, testing.AllocsPerRun(500, func() { _ = dropAll.Handle(ctx, r) }), "dropped")
}
