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

func (c *captureProc) Shutdown(context.Context) error { return nil }

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

func (nopHandler) Enabled(context.Context, slog.Level) bool { return true }

func (nopHandler) Handle(context.Context, slog.Record) error { return nil }

func (nopHandler) WithAttrs([]slog.Attr) slog.Handler { return nopHandler{} }

func (nopHandler) WithGroup(string) slog.Handler { return nopHandler{} }

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
