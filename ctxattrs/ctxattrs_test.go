package ctxattrs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/otelbridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// logLines logs through an asyncbus handler with hook and returns the lines.
func logLines(t *testing.T, hook ctxattrs.Hook, log func(*slog.Logger)) []string {
	t.Helper()
	var buf syncbuf.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: hook}, ReplaceAttr: noTime})
	log(slog.New(h))
	require.NoError(t, h.Close())
	s := buf.String()
	if s == "" {
		return nil
	}
	return bytes2lines(s)
}

func bytes2lines(s string) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimSuffix([]byte(s), []byte("\n")), []byte("\n")) {
		out = append(out, string(l))
	}
	return out
}

func TestFieldsWrittenForEveryCallWithTheContext(t *testing.T) {
	ctx := ctxattrs.With(context.Background(), slog.String("request_id", "r1"), slog.Int("user", 7))
	lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) {
		l.InfoContext(ctx, "a", "k", 1)
		l.With("w", true).WithGroup("g").WarnContext(ctx, "b", "k", 2)
		l.LogAttrs(ctx, slog.LevelError, "c")
		l.Info("no context")                     // context.Background: no fields
		l.InfoContext(context.Background(), "d") // nor here
	})
	assert.Equal(t, []string{
		`{"level":"INFO","msg":"a","request_id":"r1","user":7,"k":1}`,
		`{"level":"WARN","msg":"b","request_id":"r1","user":7,"w":true,"g":{"k":2}}`,
		`{"level":"ERROR","msg":"c","request_id":"r1","user":7}`,
		`{"level":"INFO","msg":"no context"}`,
		`{"level":"INFO","msg":"d"}`,
	}, lines)
}

func TestWithChaining(t *testing.T) {
	outer := ctxattrs.With(context.Background(), slog.String("a", "outer"), slog.String("b", "outer"))
	inner := ctxattrs.With(outer, slog.String("c", "inner"), slog.String("a", "inner"))
	tests := []struct {
		name string
		ctx  context.Context
		want []slog.Attr
	}{
		{"background", context.Background(), nil},
		{"outer", outer, []slog.Attr{slog.String("a", "outer"), slog.String("b", "outer")}},
		// inner wins on a duplicate key, in the position of the first
		{"inner", inner, []slog.Attr{slog.String("a", "inner"), slog.String("b", "outer"), slog.String("c", "inner")}},
		{"no attrs returns ctx", ctxattrs.With(outer), []slog.Attr{slog.String("a", "outer"), slog.String("b", "outer")}},
		{"empty attrs ignored", ctxattrs.With(outer, slog.Attr{}), []slog.Attr{slog.String("a", "outer"), slog.String("b", "outer")}},
		{"duplicates within one call", ctxattrs.With(context.Background(), slog.Int("x", 1), slog.Int("x", 2)), []slog.Attr{slog.Int("x", 2)}},
		//lint:ignore SA1012 a nil ctx is documented
		{"nil ctx", ctxattrs.With(nil, slog.Int("x", 1)), []slog.Attr{slog.Int("x", 1)}},
		{"group replaced whole", ctxattrs.With(ctxattrs.With(context.Background(), slog.Group("g", "a", 1)), slog.Group("g", "b", 2)),
			[]slog.Attr{slog.Group("g", "b", 2)}},
		// An inlined group has no key of its own: its members merge one by one.
		{"inlined groups are not duplicates", ctxattrs.With(context.Background(),
			slog.Group("", slog.String("request_id", "r1")), slog.Group("", slog.String("user", "ann"))),
			[]slog.Attr{slog.String("request_id", "r1"), slog.String("user", "ann")}},
		{"inlined group members replace by their own keys", ctxattrs.With(outer, slog.Group("", slog.String("a", "inner"), slog.String("d", "x"))),
			[]slog.Attr{slog.String("a", "inner"), slog.String("b", "outer"), slog.String("d", "x")}},
		{"nested inlined groups", ctxattrs.With(context.Background(), slog.Group("", slog.Group("", slog.Int("x", 1)), slog.Int("y", 2)), slog.Int("x", 3)),
			[]slog.Attr{slog.Int("x", 3), slog.Int("y", 2)}},
		{"empty inlined group ignored", ctxattrs.With(outer, slog.Group("")), []slog.Attr{slog.String("a", "outer"), slog.String("b", "outer")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ctxattrs.From(tc.ctx)
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.True(t, tc.want[i].Equal(got[i]), "%d: want %v, got %v", i, tc.want[i], got[i])
			}
		})
	}
	// The outer context is unchanged by the inner With.
	assert.Len(t, ctxattrs.From(outer), 2)
	assert.Equal(t, "outer", ctxattrs.From(outer)[0].Value.String())
	//lint:ignore SA1012 a nil ctx is documented
	assert.Nil(t, ctxattrs.From(nil))
	// With ignoring everything returns the very same context.
	assert.Equal(t, outer, ctxattrs.With(outer, slog.Attr{}))
	assert.Equal(t, outer, ctxattrs.With(outer, slog.Group("", slog.Attr{})))
}

// TestInlinedGroupsWrittenAsSlogWith: attributes with inlined groups in the
// context are written as slog's own Logger.With writes the same attributes.
func TestInlinedGroupsWrittenAsSlogWith(t *testing.T) {
	tests := []struct {
		name  string
		attrs []slog.Attr
	}{
		{"two inlined groups", []slog.Attr{slog.Group("", slog.String("request_id", "r1")), slog.Group("", slog.String("user", "ann"))}},
		{"inlined beside plain", []slog.Attr{slog.String("a", "1"), slog.Group("", slog.String("b", "2"), slog.Group("g", "c", 3))}},
		{"nested inlined", []slog.Attr{slog.Group("", slog.Group("", slog.Int("x", 1)), slog.Int("y", 2))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ref bytes.Buffer
			slog.New(slog.NewJSONHandler(&ref, &slog.HandlerOptions{ReplaceAttr: noTime})).With(attrsToAny(tc.attrs)...).Info("m")
			ctx := ctxattrs.With(context.Background(), tc.attrs...)
			lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) { l.InfoContext(ctx, "m") })
			assert.Equal(t, bytes2lines(ref.String()), lines)
		})
	}
}

func attrsToAny(as []slog.Attr) []any {
	out := make([]any, len(as))
	for i, a := range as {
		out[i] = a
	}
	return out
}

func TestWithChainingWritten(t *testing.T) {
	ctx := ctxattrs.With(context.Background(), slog.String("tenant", "t1"), slog.String("id", "outer"))
	ctx = ctxattrs.With(ctx, slog.String("id", "inner"), slog.Group("http", "method", "GET"))
	lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) { l.InfoContext(ctx, "m") })
	assert.Equal(t, []string{`{"level":"INFO","msg":"m","tenant":"t1","id":"inner","http":{"method":"GET"}}`}, lines)
}

// TestLogValuerResolvedPerRecord: a LogValuer in the context is resolved
// when each record is written, not when With is called.
func TestLogValuerResolvedPerRecord(t *testing.T) {
	n := 0
	ctx := ctxattrs.With(context.Background(), slog.Any("n", counter{&n}))
	lines := logLines(t, ctxattrs.Fields, func(l *slog.Logger) {
		l.InfoContext(ctx, "a")
		l.InfoContext(ctx, "b")
	})
	require.Len(t, lines, 2)
	var m0, m1 map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m0))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &m1))
	assert.Equal(t, float64(1), m0["n"])
	assert.Equal(t, float64(2), m1["n"])
}

type counter struct{ n *int }

func (c counter) LogValue() slog.Value { *c.n++; return slog.IntValue(*c.n) }

var (
	tid = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	sid = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

func spanCtx() context.Context {
	return trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
}

func TestChainWithTraceContext(t *testing.T) {
	hook := ctxattrs.Chain(otelbridge.TraceContext(otelbridge.StyleOTel), nil, ctxattrs.Fields)
	ctx := ctxattrs.With(spanCtx(), slog.String("request_id", "r1"))
	lines := logLines(t, hook, func(l *slog.Logger) {
		l.InfoContext(ctx, "both")
		l.InfoContext(spanCtx(), "trace only")
		l.InfoContext(ctxattrs.With(context.Background(), slog.Int("x", 1)), "attrs only")
	})
	assert.Equal(t, []string{
		`{"level":"INFO","msg":"both","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01","request_id":"r1"}`,
		`{"level":"INFO","msg":"trace only","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01"}`,
		`{"level":"INFO","msg":"attrs only","x":1}`,
	}, lines)
}

func TestChainDegenerate(t *testing.T) {
	assert.Nil(t, ctxattrs.Chain())
	assert.Nil(t, ctxattrs.Chain(nil, nil))
	// One hook is returned as is (no wrapper call per record).
	one := ctxattrs.Chain(nil, ctxattrs.Fields)
	require.NotNil(t, one)
	ctx := ctxattrs.With(context.Background(), slog.Int("x", 1))
	lines := logLines(t, one, func(l *slog.Logger) { l.InfoContext(ctx, "m") })
	assert.Equal(t, []string{`{"level":"INFO","msg":"m","x":1}`}, lines)
}

// TestConcurrentWith: contexts derived concurrently from one parent each
// carry exactly their own attributes (the parent's slice is never shared
// for appending).
func TestConcurrentWith(t *testing.T) {
	parent := ctxattrs.With(context.Background(), slog.String("p", "v"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				ctx := ctxattrs.With(parent, slog.Int("g", i), slog.Int("j", j))
				got := ctxattrs.From(ctx)
				if assert.Len(t, got, 3) {
					assert.Equal(t, int64(i), got[1].Value.Int64())
					assert.Equal(t, int64(j), got[2].Value.Int64())
				}
			}
		})
	}
	wg.Wait()
	assert.Len(t, ctxattrs.From(parent), 1)
}

func TestFieldsNilContext(t *testing.T) {
	var w asyncbus.FieldWriter
	//lint:ignore SA1012 a direct caller passing nil must not crash the hook
	assert.NotPanics(t, func() { ctxattrs.Fields(nil, &w) })
}
