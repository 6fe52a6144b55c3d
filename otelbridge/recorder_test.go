package otelbridge_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otelbridge"
)

// TestTraceGroupSelectsTheTrace: with TraceGroup, an Error in one trace
// writes that trace's kept Debug records (with its trace_id from
// TraceContext) and not the other trace's.
func TestTraceGroupSelectsTheTrace(t *testing.T) {
	var mu sync.Mutex
	var out strings.Builder
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	h := asyncbus.NewHandler(w, &asyncbus.Options{
		Format:   asyncbus.Logfmt,
		Features: asyncbus.FeatureOptions{Context: otelbridge.TraceContext(otelbridge.StyleOTel), FlightRecorder: &asyncbus.FlightRecorder{Group: otelbridge.TraceGroup}},
	})
	log := slog.New(h)
	ctxOf := func(b byte) context.Context {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b}})
		return trace.ContextWithSpanContext(context.Background(), sc)
	}
	a, b := ctxOf(0xa), ctxOf(0xb)
	log.DebugContext(a, "a step")
	log.DebugContext(b, "b step")
	log.DebugContext(context.Background(), "no trace")
	log.ErrorContext(a, "a failed")
	require.NoError(t, h.Close())
	got := out.String()
	assert.Contains(t, got, "msg=\"a step\" trace_id=0a000000000000000000000000000000")
	assert.NotContains(t, got, "b step")
	assert.NotContains(t, got, "no trace")
	assert.EqualValues(t, 1, h.Stats().RecorderWritten)

	_, ok := otelbridge.TraceGroup(context.Background())
	assert.False(t, ok, "no span, no group")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
