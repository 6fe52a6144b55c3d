//go:build !race

// The race detector's instrumentation changes escape analysis, so allocation
// counts are asserted only in the normal (non -race) test run.

package otelbridge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
)

func TestOnEmitAllocations(t *testing.T) {
	rec := record(log.SeverityInfo, attribute.StringValue("m"),
		attribute.String("a", "x"), attribute.Int("b", 1), attribute.Bool("c", true), attribute.Float64("d", 1.5), attribute.String("e", "y"))
	tests := []struct {
		name string
		ctx  context.Context
		want float64
	}{
		// 5 attributes + observed timestamp + scope exceed slog.Record's 5
		// inline attributes: its overflow slice is the one allocation.
		{"no span", context.Background(), 1},
		// One more for the string holding both hex IDs.
		{"span", spanCtx(1), 2},
	}
	p := NewProcessor(nopHandler{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := &captureProc{}
			l, _ := emitter(t, cp)
			l.Emit(tc.ctx, rec)
			require.Len(t, cp.recs, 1)
			r := &cp.recs[0]
			got := testing.AllocsPerRun(200, func() { _ = p.OnEmit(context.Background(), r) })
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestOnEmitIntoAsyncbusAllocations: into an asyncbus handler the
// attributes go through HandleAttrs from a stack buffer, so OnEmit itself
// allocates nothing without a span (the SDK's own record is the one
// allocation of an emit) and only the hex ID string with one. When the
// context passed to OnEmit holds a valid span too (a Processor emitting
// inside a span), one more allocation marks the context so that a
// TraceContext hook leaves the keys to the record.
func TestOnEmitIntoAsyncbusAllocations(t *testing.T) {
	rec := record(log.SeverityInfo, attribute.StringValue("m"),
		attribute.String("a", "x"), attribute.Int("b", 1), attribute.Bool("c", true), attribute.Float64("d", 1.5), attribute.String("e", "y"))
	for _, opts := range []*asyncbus.Options{nil, {Features: asyncbus.FeatureOptions{Context: TraceContext(StyleOTel)}}} {
		h := asyncbus.NewHandler(io.Discard, opts)
		defer h.Close()
		p := NewProcessor(h)
		for _, tc := range []struct {
			name      string
			recordCtx context.Context // where the record was emitted
			emitCtx   context.Context // what OnEmit is given
			want      float64
		}{
			{"no span", context.Background(), context.Background(), 0},
			{"record ids", spanCtx(1), context.Background(), 1},
			{"record ids and span in context", spanCtx(1), spanCtx(1), 2},
		} {
			t.Run(fmt.Sprintf("%s/hook=%t", tc.name, opts != nil), func(t *testing.T) {
				cp := &captureProc{}
				l, _ := emitter(t, cp)
				l.Emit(tc.recordCtx, rec)
				require.Len(t, cp.recs, 1)
				r := &cp.recs[0]
				assert.Equal(t, tc.want, testing.AllocsPerRun(200, func() { _ = p.OnEmit(tc.emitCtx, r) }))
			})
		}
	}
}

// TestTraceContextAllocations: with a valid span, the hook adds no
// allocation to Handle compared with the same handler given no span.
func TestTraceContextAllocations(t *testing.T) {
	for _, style := range []Style{StyleOTel, StyleECS, StyleGoogleCloud, StyleDatadog, StyleDatadog64} {
		t.Run(styleName(style), func(t *testing.T) {
			h := asyncbus.NewHandler(discard{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(style, WithProjectID("my-project"))}})
			defer func() { require.NoError(t, h.Close()) }()
			r := slog.NewRecord(ts, slog.LevelInfo, "m", 0)
			withSpan, noSpan := spanCtx(1), context.Background()
			base := testing.AllocsPerRun(500, func() { _ = h.Handle(noSpan, r) })
			got := testing.AllocsPerRun(500, func() { _ = h.Handle(withSpan, r) })
			assert.Equal(t, base, got)
		})
	}
}
