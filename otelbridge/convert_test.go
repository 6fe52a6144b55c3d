package otelbridge

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

func TestProcessorMapping(t *testing.T) {
	tests := []struct {
		name  string
		ctx   context.Context
		rec   func() log.Record
		opts  []Option
		check func(t *testing.T, m map[string]any)
	}{
		{
			name: "string body is msg, info level",
			rec:  func() log.Record { return record(log.SeverityInfo, attribute.StringValue("hello")) },
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "hello", m["msg"])
				assert.Equal(t, "INFO", m["level"])
				assert.Equal(t, ts.Format(time.RFC3339Nano), m["time"])
				assert.Equal(t, observed.Format(time.RFC3339Nano), m[KeyObservedTimestamp])
				assert.NotContains(t, m, KeyBody)
				assert.NotContains(t, m, KeyTraceID)
				assert.NotContains(t, m, KeySeverityText)
				assert.Equal(t, map[string]any{"name": "test/scope", "version": "v1.2.3"}, m[KeyScope])
				assert.NotContains(t, m, KeyResource)
			},
		},
		{
			name: "severity minus nine and severity text",
			rec: func() log.Record {
				r := record(log.SeverityWarn2, attribute.StringValue("w"))
				r.SetSeverityText("WARNING")
				return r
			},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "WARN+1", m["level"])
				assert.Equal(t, "WARNING", m[KeySeverityText])
			},
		},
		{
			name: "non-string body becomes body attribute",
			rec: func() log.Record {
				return record(log.SeverityError, attribute.MapValue(attribute.Int("code", 7), attribute.String("why", "x")))
			},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "", m["msg"])
				assert.Equal(t, "ERROR", m["level"])
				assert.Equal(t, map[string]any{"code": 7.0, "why": "x"}, m[KeyBody])
			},
		},
		{
			name: "attributes, maps as groups, slices as arrays, event name",
			rec: func() log.Record {
				r := record(log.SeverityDebug, attribute.StringValue("m"),
					attribute.String("s", "v"), attribute.Int64("i", -3), attribute.Float64("f", 2.5), attribute.Bool("b", true),
					attribute.Map("g", attribute.String("k", "v"), attribute.Map("inner", attribute.Int("n", 1))),
					attribute.StringSlice("ss", []string{"a", "b"}),
					attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("two"), attribute.MapValue(attribute.Bool("t", true))),
					attribute.ByteSlice("bytes", []byte("hi")),
				)
				r.SetEventName("user.login")
				return r
			},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "DEBUG", m["level"])
				assert.Equal(t, "user.login", m[KeyEventName])
				assert.Equal(t, "v", m["s"])
				assert.Equal(t, -3.0, m["i"])
				assert.Equal(t, 2.5, m["f"])
				assert.Equal(t, true, m["b"])
				assert.Equal(t, map[string]any{"k": "v", "inner": map[string]any{"n": 1.0}}, m["g"])
				assert.Equal(t, []any{"a", "b"}, m["ss"])
				assert.Equal(t, []any{1.0, "two", map[string]any{"t": true}}, m["mixed"])
				assert.Equal(t, "aGk=", m["bytes"]) // JSON handler: []byte is base64
			},
		},
		{
			name: "valid span context gives lowercase hex ids and flags",
			ctx:  spanCtx(trace.FlagsSampled),
			rec:  func() log.Record { return record(log.SeverityInfo, attribute.StringValue("traced")) },
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", m[KeyTraceID])
				assert.Equal(t, "00f067aa0ba902b7", m[KeySpanID])
				assert.Equal(t, "01", m[KeyTraceFlags])
			},
		},
		{
			name: "resource group on, scope off",
			opts: []Option{WithResource(true), WithScope(false)},
			rec:  func() log.Record { return record(log.SeverityInfo, attribute.StringValue("r")) },
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, map[string]any{"service.name": "svc", "host.name": "h1"}, m[KeyResource])
				assert.NotContains(t, m, KeyScope)
			},
		},
		{
			name: "timestamp missing: observed time is the record time",
			rec: func() log.Record {
				r := record(log.SeverityInfo, attribute.StringValue("x"))
				r.SetTimestamp(time.Time{})
				return r
			},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, observed.Format(time.RFC3339Nano), m["time"])
			},
		},
		{
			name: "undefined severity is INFO, empty body gives empty msg",
			rec:  func() log.Record { return record(log.SeverityUndefined, attribute.Value{}) },
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "INFO", m["level"])
				assert.Equal(t, "", m["msg"])
				assert.NotContains(t, m, KeyBody)
			},
		},
	}
	res := resource.NewSchemaless(attribute.String("service.name", "svc"), attribute.String("host.name", "h1"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-20)})
			l, lp := emitter(t, NewProcessor(h, tc.opts...), sdklog.WithResource(res))
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			l.Emit(ctx, tc.rec())
			require.NoError(t, lp.Shutdown(context.Background()))
			lines := buf.lines(t)
			require.Len(t, lines, 1)
			tc.check(t, lines[0])
		})
	}
}

func TestLevelMapping(t *testing.T) {
	tests := []struct {
		sev  log.Severity
		want slog.Level
	}{
		{log.SeverityUndefined, slog.LevelInfo},
		{log.SeverityTrace1, slog.Level(-8)},
		{log.SeverityDebug1, slog.LevelDebug},
		{log.SeverityInfo1, slog.LevelInfo},
		{log.SeverityInfo4, slog.Level(3)},
		{log.SeverityWarn1, slog.LevelWarn},
		{log.SeverityError1, slog.LevelError},
		{log.SeverityFatal1, slog.Level(12)},
		{log.SeverityFatal4, slog.Level(15)},
	}
	for _, tc := range tests {
		t.Run(tc.sev.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, level(tc.sev))
		})
	}
}

// deep returns a map value nested n levels.
func deep(n int) attribute.Value {
	v := attribute.StringValue("leaf")
	for range n {
		v = attribute.MapValue(attribute.KeyValue{Key: "d", Value: v})
	}
	return v
}

func TestBadInput(t *testing.T) {
	huge := make([]attribute.KeyValue, 10000)
	for i := range huge {
		huge[i] = attribute.Int(strings.Repeat("k", i%7+1)+string(rune('a'+i%26))+string(rune('A'+i/26%26))+string(rune('0'+i/676)), i)
	}
	tests := []struct {
		name  string
		attrs []attribute.KeyValue
		body  attribute.Value
		check func(t *testing.T, m map[string]any)
	}{
		{
			name:  "empty keys inside a map",
			attrs: []attribute.KeyValue{attribute.Map("m", attribute.String("", "v"), attribute.String("k", "w"))},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, map[string]any{emptyKey: "v", "k": "w"}, m["m"])
			},
		},
		{
			name:  "deeply nested map is cut at the depth limit, rest kept as text",
			attrs: []attribute.KeyValue{{Key: "deep", Value: deep(5000)}},
			check: func(t *testing.T, m map[string]any) {
				v := m["deep"]
				for range DefaultMaxDepth {
					g, ok := v.(map[string]any)
					require.True(t, ok, "expected a group, got %T", v)
					v = g["d"]
				}
				s, ok := v.(string)
				require.True(t, ok, "expected string past the limit, got %T", v)
				assert.Contains(t, s, "leaf")
			},
		},
		{
			name:  "deeply nested slice",
			attrs: []attribute.KeyValue{attribute.Slice("s", deepSlice(100))},
			check: func(t *testing.T, m map[string]any) {
				assert.IsType(t, []any{}, m["s"])
			},
		},
		{
			name:  "huge map",
			attrs: []attribute.KeyValue{attribute.Map("huge", huge...)},
			check: func(t *testing.T, m map[string]any) {
				assert.Len(t, m["huge"], len(huge))
			},
		},
		{
			name:  "invalid utf-8",
			attrs: []attribute.KeyValue{attribute.String("bad\xff", "v\xfe\xfd")},
			body:  attribute.StringValue("msg\xc3\x28"),
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "msg\ufffd(", m["msg"])
				assert.Equal(t, "v\ufffd\ufffd", m["bad\ufffd"])
			},
		},
		{
			name: "NaN and infinities",
			attrs: []attribute.KeyValue{
				attribute.Float64("nan", nanValue()), attribute.Float64Slice("fs", []float64{1, infValue(1), infValue(-1)}),
			},
			check: func(t *testing.T, m map[string]any) {
				assert.Equal(t, "NaN", m["nan"])
				assert.Equal(t, []any{1.0, "+Inf", "-Inf"}, m["fs"])
			},
		},
		{
			name:  "empty value",
			attrs: []attribute.KeyValue{{Key: "empty", Value: attribute.Value{}}},
			check: func(t *testing.T, m map[string]any) {
				assert.Contains(t, m, "empty")
				assert.Nil(t, m["empty"])
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			// A high SDK depth limit so that our own limit is what is tested.
			l, lp := emitter(t, NewProcessor(slog.NewJSONHandler(&buf, nil)), sdklog.WithAttributeValueDepthLimit(100000))
			body := tc.body
			if body.Type() == attribute.EMPTY {
				body = attribute.StringValue("x")
			}
			require.NotPanics(t, func() { l.Emit(context.Background(), record(log.SeverityInfo, body, tc.attrs...)) })
			require.NoError(t, lp.Shutdown(context.Background()))
			lines := buf.lines(t)
			require.Len(t, lines, 1)
			tc.check(t, lines[0])
		})
	}
}

func deepSlice(n int) attribute.Value {
	v := attribute.IntValue(1)
	for range n {
		v = attribute.SliceValue(attribute.IntValue(1), attribute.MapValue(attribute.KeyValue{Key: "m", Value: v}))
	}
	return v
}

func nanValue() float64 { z := 0.0; return z / z }

func infValue(sign float64) float64 { z := 0.0; return sign / z }
