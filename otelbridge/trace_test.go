package otelbridge

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
)

// TestPresetTraceCorrelation writes one record through each cloud preset
// with the matching trace style: the line must carry the platform's
// built-in fields and its trace correlation fields, as documented at
//   - https://cloud.google.com/logging/docs/structured-logging (trace as
//     projects/PROJECT_ID/traces/TRACE_ID, spanId, trace_sampled);
//   - https://www.elastic.co/guide/en/ecs/current/ecs-tracing.html (trace.id, span.id);
//   - https://docs.datadoghq.com/tracing/other_telemetry/connect_logs_and_traces/opentelemetry/
//     (dd.trace_id and dd.span_id: the low 64 bits of the trace ID and the
//     span ID, as decimal strings).
func TestPresetTraceCorrelation(t *testing.T) {
	tests := []struct {
		name   string
		format asyncbus.Format
		style  Style
		want   map[string]any
	}{
		{"gcp", asyncbus.GCPJSON, StyleGoogleCloud, map[string]any{
			"severity": "ERROR", "message": "charge failed",
			KeyGCPTrace:   "projects/my-project/traces/4bf92f3577b34da6a3ce929d0e0e4736",
			KeyGCPSpanID:  "00f067aa0ba902b7",
			KeyGCPSampled: true,
		}},
		{"ecs", asyncbus.ECSJSON, StyleECS, map[string]any{
			"log.level": "error", "message": "charge failed", "ecs.version": "1.6.0",
			KeyECSTraceID: "4bf92f3577b34da6a3ce929d0e0e4736", KeyECSSpanID: "00f067aa0ba902b7",
		}},
		// 0xa3ce929d0e0e4736 = 11803532876627986230, 0x00f067aa0ba902b7 = 67667974448284343
		{"datadog", asyncbus.DatadogJSON, StyleDatadog, map[string]any{
			"status": "error", "message": "charge failed",
			KeyDDTraceID: "11803532876627986230", KeyDDSpanID: "67667974448284343",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			h := newBus(t, &buf, &asyncbus.Options{
				Format:  tc.format,
				Context: TraceContext(tc.style, WithProjectID("my-project")),
			})
			slog.New(h).ErrorContext(spanCtx(trace.FlagsSampled), "charge failed", "amount", 42)
			require.NoError(t, h.Flush())
			lines := buf.lines(t)
			require.Len(t, lines, 1)
			for k, v := range tc.want {
				assert.Equal(t, v, lines[0][k], k)
			}
			assert.EqualValues(t, 42, lines[0]["amount"])
		})
	}
}

// TestStylePrintsItsName (issue 33): %v of a Style prints the constant's
// name, not a number.
func TestStylePrintsItsName(t *testing.T) {
	tests := []struct {
		s    Style
		want string
	}{
		{StyleOTel, "StyleOTel"},
		{StyleECS, "StyleECS"},
		{StyleGoogleCloud, "StyleGoogleCloud"},
		{StyleDatadog, "StyleDatadog"},
		{Style(9), "Style(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmt.Sprintf("%v", tt.s))
		})
	}
}

func TestTraceContextGCPProjectFromEnv(t *testing.T) {
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-project")
	for _, tc := range []struct {
		opts []TraceOption
		want string
	}{
		{nil, "projects/env-project/traces/4bf92f3577b34da6a3ce929d0e0e4736"},
		{[]TraceOption{WithProjectID("explicit")}, "projects/explicit/traces/4bf92f3577b34da6a3ce929d0e0e4736"},
	} {
		var buf syncBuffer
		h := newBus(t, &buf, &asyncbus.Options{Format: asyncbus.GCPJSON, Context: TraceContext(StyleGoogleCloud, tc.opts...)})
		slog.New(h).InfoContext(spanCtx(0), "x")
		require.NoError(t, h.Flush())
		line := buf.lines(t)[0]
		assert.Equal(t, tc.want, line[KeyGCPTrace])
		assert.Equal(t, false, line[KeyGCPSampled])
	}
}
