package otelbridge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

var (
	ts       = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	observed = time.Date(2025, 3, 4, 5, 6, 8, 0, time.UTC)
	tid      = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	sid      = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

// syncBuffer is a syncbuf.Buffer whose JSON lines the tests decode.
type syncBuffer struct{ syncbuf.Buffer }

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.True(t, json.Valid([]byte(l)), "invalid JSON line: %s", l)
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// emitter builds an SDK provider whose only processor is p.
func emitter(t *testing.T, p sdklog.Processor, opts ...sdklog.LoggerProviderOption) (log.Logger, *sdklog.LoggerProvider) {
	t.Helper()
	lp := sdklog.NewLoggerProvider(append(opts, sdklog.WithProcessor(p))...)
	return lp.Logger("test/scope", log.WithInstrumentationVersion("v1.2.3")), lp
}

func record(sev log.Severity, body attribute.Value, attrs ...attribute.KeyValue) log.Record {
	var r log.Record
	r.SetTimestamp(ts)
	r.SetObservedTimestamp(observed)
	r.SetSeverity(sev)
	r.SetBody(body)
	r.AddAttributes(attrs...)
	return r
}

func spanCtx(flags trace.TraceFlags) context.Context {
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags}))
}

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

func TestInvalidTraceIDsNotWritten(t *testing.T) {
	tests := []struct {
		name string
		sc   trace.SpanContextConfig
	}{
		{"zero", trace.SpanContextConfig{}},
		{"zero trace id", trace.SpanContextConfig{SpanID: sid, TraceFlags: 1}},
		{"zero span id", trace.SpanContextConfig{TraceID: tid, TraceFlags: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			l, lp := emitter(t, NewProcessor(slog.NewJSONHandler(&buf, nil)))
			ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(tc.sc))
			l.Emit(ctx, record(log.SeverityInfo, attribute.StringValue("x")))
			require.NoError(t, lp.Shutdown(context.Background()))
			m := buf.lines(t)[0]
			assert.NotContains(t, m, KeyTraceFlags)
			// A half-valid pair writes only the valid half.
			if tc.sc.TraceID.IsValid() {
				assert.Equal(t, tid.String(), m[KeyTraceID])
			} else {
				assert.NotContains(t, m, KeyTraceID)
			}
			if tc.sc.SpanID.IsValid() {
				assert.Equal(t, sid.String(), m[KeySpanID])
			} else {
				assert.NotContains(t, m, KeySpanID)
			}
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

// flushHandler is a slog.Handler with a Flush method that counts flushes and
// can be made to block until released.
type flushHandler struct {
	slog.Handler
	mu      sync.Mutex
	flushes int
	gate    chan struct{} // when non-nil, Flush waits for it to close
	err     error
}

func (f *flushHandler) Flush() error {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes++
	return f.err
}

func (f *flushHandler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flushes
}

type lifecycler interface {
	Shutdown(context.Context) error
	ForceFlush(context.Context) error
}

func TestLifecycle(t *testing.T) {
	makers := map[string]func(h slog.Handler) lifecycler{
		"processor": func(h slog.Handler) lifecycler { return NewProcessor(h) },
		"exporter":  func(h slog.Handler) lifecycler { return NewExporter(h) },
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			var buf syncBuffer
			fh := &flushHandler{Handler: slog.NewJSONHandler(&buf, nil)}
			l := mk(fh)
			ctx := context.Background()

			require.NoError(t, l.ForceFlush(ctx))
			assert.Equal(t, 1, fh.count())

			require.NoError(t, l.Shutdown(ctx))
			assert.Equal(t, 2, fh.count())
			require.NoError(t, l.Shutdown(ctx), "idempotent")
			require.NoError(t, l.ForceFlush(ctx), "no-op after shutdown")
			assert.Equal(t, 2, fh.count())

			switch x := l.(type) {
			case *Processor:
				l2, _ := emitter(t, x)
				l2.Emit(ctx, record(log.SeverityError, attribute.StringValue("after")))
				assert.False(t, x.Enabled(ctx, sdklog.EnabledParameters{Severity: log.SeverityError}))
			case *Exporter:
				err := x.Export(ctx, capture(t, record(log.SeverityError, attribute.StringValue("after"))))
				require.ErrorIs(t, err, sdklog.ErrExporterShutdown)
			}
			assert.Empty(t, buf.lines(t))
		})
	}
}

func TestFlushErrorsAndDeadlines(t *testing.T) {
	for _, name := range []string{"processor", "exporter"} {
		t.Run(name, func(t *testing.T) {
			fh := &flushHandler{Handler: slog.DiscardHandler, gate: make(chan struct{})}
			var l lifecycler = NewProcessor(fh)
			if name == "exporter" {
				l = NewExporter(fh)
			}
			// A flush that outlives the deadline returns the context error.
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			require.ErrorIs(t, l.ForceFlush(ctx), context.DeadlineExceeded)
			// An already-cancelled context fails at once, without flushing.
			cctx, ccancel := context.WithCancel(context.Background())
			ccancel()
			require.ErrorIs(t, l.Shutdown(cctx), context.Canceled)
			close(fh.gate)
			// Shutdown already happened (it is idempotent even after failing).
			require.NoError(t, l.Shutdown(context.Background()))

			// Flush errors are returned.
			boom := errors.New("boom")
			fh2 := &flushHandler{Handler: slog.DiscardHandler, err: boom}
			require.ErrorIs(t, NewProcessor(fh2).ForceFlush(context.Background()), boom)
			require.ErrorIs(t, NewExporter(fh2).Shutdown(context.Background()), boom)
		})
	}
}

func TestNonFlushingHandler(t *testing.T) {
	p := NewProcessor(slog.DiscardHandler)
	require.NoError(t, p.ForceFlush(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestEnabledFollowsHandler(t *testing.T) {
	var buf syncBuffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})
	p := NewProcessor(h)
	tests := []struct {
		sev  log.Severity
		want bool
	}{
		{log.SeverityDebug, false}, {log.SeverityInfo4, false}, {log.SeverityWarn, true}, {log.SeverityFatal, true},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, p.Enabled(context.Background(), sdklog.EnabledParameters{Severity: tc.sev}), tc.sev.String())
	}
	l, lp := emitter(t, p)
	l.Emit(context.Background(), record(log.SeverityInfo, attribute.StringValue("dropped by level")))
	l.Emit(context.Background(), record(log.SeverityError, attribute.StringValue("kept")))
	require.NoError(t, lp.Shutdown(context.Background()))
	lines := buf.lines(t)
	require.Len(t, lines, 1)
	assert.Equal(t, "kept", lines[0]["msg"])
}

// captureProc keeps clones of emitted records, to feed Exporter.Export.
type captureProc struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (c *captureProc) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *captureProc) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r.Clone())
	return nil
}
func (c *captureProc) Shutdown(context.Context) error   { return nil }
func (c *captureProc) ForceFlush(context.Context) error { return nil }

func capture(t *testing.T, recs ...log.Record) []sdklog.Record {
	t.Helper()
	cp := &captureProc{}
	l, _ := emitter(t, cp)
	for _, r := range recs {
		l.Emit(context.Background(), r)
	}
	return cp.recs
}

// failHandler fails every record whose message is "fail".
type failHandler struct{ slog.Handler }

var errFail = errors.New("handler failed")

func (f failHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "fail" {
		return errFail
	}
	return f.Handler.Handle(ctx, r)
}

func TestExporter(t *testing.T) {
	recs := capture(t,
		record(log.SeverityInfo, attribute.StringValue("one"), attribute.String("k", "v")),
		record(log.SeverityDebug, attribute.StringValue("below level")),
		record(log.SeverityWarn, attribute.StringValue("fail")),
		record(log.SeverityError, attribute.StringValue("three")),
		record(log.SeverityError, attribute.StringValue("fail")),
	)
	require.Len(t, recs, 5)

	t.Run("writes in order and reports failures", func(t *testing.T) {
		var buf syncBuffer
		e := NewExporter(failHandler{slog.NewJSONHandler(&buf, nil)})
		err := e.Export(context.Background(), recs)
		require.ErrorIs(t, err, errFail)
		assert.Contains(t, err.Error(), "2 of 5 records failed")
		lines := buf.lines(t)
		require.Len(t, lines, 2)
		assert.Equal(t, "one", lines[0]["msg"])
		assert.Equal(t, "v", lines[0]["k"])
		assert.Equal(t, "three", lines[1]["msg"])
	})
	t.Run("cancelled context stops the export", func(t *testing.T) {
		var buf syncBuffer
		e := NewExporter(slog.NewJSONHandler(&buf, nil))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := e.Export(ctx, recs)
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "5 of 5 records not exported")
		assert.Empty(t, buf.lines(t))
	})
	t.Run("behind the SDK batch processor", func(t *testing.T) {
		var buf syncBuffer
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(NewExporter(slog.NewJSONHandler(&buf, nil)))))
		l := lp.Logger("batch")
		for i := range 100 {
			l.Emit(context.Background(), record(log.SeverityInfo, attribute.StringValue("batched"), attribute.Int("i", i)))
		}
		require.NoError(t, lp.Shutdown(context.Background()))
		lines := buf.lines(t)
		require.Len(t, lines, 100)
		for i, m := range lines {
			assert.Equal(t, float64(i), m["i"])
		}
	})
}

func TestConcurrentEmit(t *testing.T) {
	var buf syncBuffer
	fh := &flushHandler{Handler: slog.NewJSONHandler(&buf, nil)}
	l, lp := emitter(t, NewProcessor(fh, WithResource(true)))
	const goroutines, per = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				l.Emit(spanCtx(1), record(log.SeverityInfo, attribute.StringValue("c"), attribute.Int("g", g), attribute.Int("i", i)))
			}
		})
	}
	wg.Wait()
	require.NoError(t, lp.Shutdown(context.Background()))
	assert.Equal(t, 1, fh.count())
	lines := buf.lines(t)
	require.Len(t, lines, goroutines*per)
	seen := make(map[[2]int]bool, len(lines))
	for _, m := range lines {
		seen[[2]int{int(m["g"].(float64)), int(m["i"].(float64))}] = true
		assert.Equal(t, tid.String(), m[KeyTraceID])
	}
	assert.Len(t, seen, goroutines*per)
}

// nopHandler accepts everything and keeps nothing.
type nopHandler struct{}

func (nopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (nopHandler) Handle(context.Context, slog.Record) error { return nil }
func (nopHandler) WithAttrs([]slog.Attr) slog.Handler        { return nopHandler{} }
func (nopHandler) WithGroup(string) slog.Handler             { return nopHandler{} }

func BenchmarkProcessorOnEmit(b *testing.B) {
	recs := captureB(b, record(log.SeverityInfo, attribute.StringValue("m"),
		attribute.String("a", "x"), attribute.Int("b", 1), attribute.Bool("c", true), attribute.Float64("d", 1.5), attribute.String("e", "y")))
	p := NewProcessor(nopHandler{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = p.OnEmit(ctx, &recs[0])
	}
}

func captureB(b *testing.B, recs ...log.Record) []sdklog.Record {
	cp := &captureProc{}
	l := sdklog.NewLoggerProvider(sdklog.WithProcessor(cp)).Logger("bench")
	for _, r := range recs {
		l.Emit(context.Background(), r)
	}
	return cp.recs
}

// keepHandler keeps clones of the records it handles.
type keepHandler struct {
	nopHandler
	mu   sync.Mutex
	recs []slog.Record
}

func (k *keepHandler) Handle(_ context.Context, r slog.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs = append(k.recs, r.Clone())
	return nil
}

// TestNoRetention: changing the SDK records after OnEmit/Export returns does
// not change what the handler received, so nothing of them is kept.
func TestNoRetention(t *testing.T) {
	summary := func(r slog.Record) string {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != KeyObservedTimestamp {
				b.WriteString(" " + a.String())
			}
			return true
		})
		return b.String()
	}
	mutate := func(r *sdklog.Record) {
		r.SetBody(attribute.StringValue("changed"))
		r.SetAttributes(attribute.String("k", "changed"))
		r.SetSeverityText("changed")
	}
	for _, name := range []string{"processor", "exporter"} {
		t.Run(name, func(t *testing.T) {
			recs := capture(t, record(log.SeverityInfo, attribute.StringValue("orig"), attribute.String("k", "v"), attribute.Map("m", attribute.Int("x", 1))))
			kh := &keepHandler{}
			if name == "processor" {
				require.NoError(t, NewProcessor(kh).OnEmit(context.Background(), &recs[0]))
			} else {
				require.NoError(t, NewExporter(kh).Export(context.Background(), recs))
			}
			require.Len(t, kh.recs, 1)
			before := summary(kh.recs[0])
			mutate(&recs[0])
			assert.Equal(t, before, summary(kh.recs[0]))
			assert.Contains(t, before, "orig")
			assert.Contains(t, before, "k=v")
		})
	}
}
