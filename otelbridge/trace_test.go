package otelbridge

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
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
//   - Datadog: dd.trace_id (32 hex digits) and dd.span_id (decimal), as
//     dd-trace-go v2 writes them (TestStyleDatadogMatchesTracer).
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
		// 0x00f067aa0ba902b7 = 67667974448284343
		{"datadog", asyncbus.DatadogJSON, StyleDatadog, map[string]any{
			"status": "error", "message": "charge failed",
			KeyDDTraceID: "4bf92f3577b34da6a3ce929d0e0e4736", KeyDDSpanID: "67667974448284343",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			h := newBus(t, &buf, &asyncbus.Options{
				Format:   tc.format,
				Features: asyncbus.FeatureOptions{Context: TraceContext(tc.style, WithProjectID("my-project"))},
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

// TestStylePrintsItsName: %v of a Style prints the constant's
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
		h := newBus(t, &buf, &asyncbus.Options{Format: asyncbus.GCPJSON, Features: asyncbus.FeatureOptions{Context: TraceContext(StyleGoogleCloud, tc.opts...)}})
		slog.New(h).InfoContext(spanCtx(0), "x")
		require.NoError(t, h.Flush())
		line := buf.lines(t)[0]
		assert.Equal(t, tc.want, line[KeyGCPTrace])
		assert.Equal(t, false, line[KeyGCPSampled])
	}
}

// TestStyleDatadogMatchesTracer compares StyleDatadog with what Datadog's
// Go tracer writes (testdata: its output, with the version it came from)
// for a span with the same identifiers: a 128-bit trace ID and one with
// the high 64 bits zero. Building against the tracer itself would add
// about 125 modules and over two minutes of cold build to CI.
func TestStyleDatadogMatchesTracer(t *testing.T) {
	f, err := os.Open("testdata/dd-trace-go-v2.12.0-slog.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	cases := 0
	for sc.Scan() {
		ids, ok := strings.CutPrefix(sc.Text(), "ids ")
		if !ok {
			continue
		}
		fields := strings.Fields(ids)
		tidBytes, err := hex.DecodeString(fields[0])
		require.NoError(t, err)
		spanID, err := strconv.ParseUint(fields[1], 10, 64)
		require.NoError(t, err)
		require.True(t, sc.Scan(), "the tracer's line after %q", ids)
		var want map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &want))

		var cfg trace.SpanContextConfig
		copy(cfg.TraceID[:], tidBytes)
		for i := range 8 {
			cfg.SpanID[i] = byte(spanID >> (56 - 8*i))
		}
		var buf syncBuffer
		noTime := func(groups []string, a slog.Attr) slog.Attr { // as the fixture's handler
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		}
		h := newBus(t, &buf, &asyncbus.Options{ReplaceAttr: noTime, Features: asyncbus.FeatureOptions{Context: TraceContext(StyleDatadog)}})
		ctx := trace.ContextWithSpanContext(t.Context(), trace.NewSpanContext(cfg))
		slog.New(h).InfoContext(ctx, "charge failed")
		require.NoError(t, h.Flush())
		lines := buf.lines(t)
		require.Len(t, lines, 1)
		assert.Equal(t, want, lines[0], ids)
		cases++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 2, cases)
}

// TestStyleDatadog64 writes the low 64 bits of the trace ID in decimal, as
// dd-trace-go v1 does by default.
func TestStyleDatadog64(t *testing.T) {
	var buf syncBuffer
	h := newBus(t, &buf, &asyncbus.Options{Format: asyncbus.DatadogJSON, Features: asyncbus.FeatureOptions{Context: TraceContext(StyleDatadog64)}})
	slog.New(h).InfoContext(spanCtx(0), "x")
	require.NoError(t, h.Flush())
	line := buf.lines(t)[0]
	// 0xa3ce929d0e0e4736 = 11803532876627986230, 0x00f067aa0ba902b7 = 67667974448284343
	assert.Equal(t, "11803532876627986230", line[KeyDDTraceID])
	assert.Equal(t, "67667974448284343", line[KeyDDSpanID])
}
