package otelbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
)

func newBus(t *testing.T, buf *syncBuffer, opts *asyncbus.Options) *asyncbus.Handler {
	t.Helper()
	h := asyncbus.NewHandler(buf, opts)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestProcessorIntoAsyncbus sends SDK records through the Processor into a
// real asyncbus handler: Shutdown must flush them to the output.
func TestProcessorIntoAsyncbus(t *testing.T) {
	var buf syncBuffer
	h := newBus(t, &buf, &asyncbus.Options{Level: asyncbus.LevelTrace})
	l, lp := emitter(t, NewProcessor(h))
	const n = 1000
	for i := range n {
		r := record(log.SeverityWarn, attribute.StringValue("via otel"), attribute.Int("i", i), attribute.Map("g", attribute.String("k", "v")))
		r.SetEventName("evt")
		l.Emit(spanCtx(1), r)
	}
	require.NoError(t, lp.Shutdown(context.Background()))
	lines := buf.lines(t)
	require.Len(t, lines, n)
	for i, m := range lines {
		assert.Equal(t, "via otel", m["msg"])
		assert.Equal(t, float64(i), m["i"])
		assert.Equal(t, "evt", m[KeyEventName])
		assert.Equal(t, tid.String(), m[KeyTraceID])
		assert.Equal(t, sid.String(), m[KeySpanID])
		assert.Equal(t, "01", m[KeyTraceFlags])
		assert.Equal(t, map[string]any{"k": "v"}, m["g"])
	}
	st := h.Stats()
	assert.Equal(t, uint64(n), st.Written)
	assert.Zero(t, st.Dropped)
}

func TestExporterIntoAsyncbusAfterClose(t *testing.T) {
	var buf syncBuffer
	h := asyncbus.NewHandler(&buf, nil)
	e := NewExporter(h)
	recs := capture(t, record(log.SeverityInfo, attribute.StringValue("a")), record(log.SeverityInfo, attribute.StringValue("b")))
	require.NoError(t, e.Export(context.Background(), recs))
	require.NoError(t, h.Close())
	// The handler refuses records after Close: the export reports it.
	err := e.Export(context.Background(), recs)
	require.ErrorIs(t, err, asyncbus.ErrClosed)
	assert.Contains(t, err.Error(), "2 of 2 records failed")
	assert.Len(t, buf.lines(t), 2)
}

func TestTraceContextStyles(t *testing.T) {
	tests := []struct {
		name  string
		style Style
		opts  []TraceOption
		want  map[string]any
	}{
		{"otel", StyleOTel, nil, map[string]any{
			KeyTraceID: "4bf92f3577b34da6a3ce929d0e0e4736", KeySpanID: "00f067aa0ba902b7", KeyTraceFlags: "01"}},
		{"ecs", StyleECS, nil, map[string]any{
			KeyECSTraceID: "4bf92f3577b34da6a3ce929d0e0e4736", KeyECSSpanID: "00f067aa0ba902b7"}},
		{"google cloud", StyleGoogleCloud, []TraceOption{WithProjectID("my-project")}, map[string]any{
			KeyGCPTrace: "projects/my-project/traces/4bf92f3577b34da6a3ce929d0e0e4736", KeyGCPSpanID: "00f067aa0ba902b7", KeyGCPSampled: true}},
		{"google cloud without project", StyleGoogleCloud, nil, map[string]any{
			KeyGCPTrace: "4bf92f3577b34da6a3ce929d0e0e4736", KeyGCPSpanID: "00f067aa0ba902b7", KeyGCPSampled: true}},
		// 0xa3ce929d0e0e4736 = 11803532876627986230, 0x00f067aa0ba902b7 = 67667974448284343
		{"datadog", StyleDatadog, nil, map[string]any{
			KeyDDTraceID: "4bf92f3577b34da6a3ce929d0e0e4736", KeyDDSpanID: "67667974448284343"}},
		{"datadog 64", StyleDatadog64, nil, map[string]any{
			KeyDDTraceID: "11803532876627986230", KeyDDSpanID: "67667974448284343"}},
	}
	allKeys := []string{KeyTraceID, KeySpanID, KeyTraceFlags, KeyECSTraceID, KeyECSSpanID, KeyGCPTrace, KeyGCPSpanID, KeyGCPSampled, KeyDDTraceID, KeyDDSpanID}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOOGLE_CLOUD_PROJECT", "") // only WithProjectID here; see TestTraceContextGCPProjectFromEnv
			var buf syncBuffer
			h := newBus(t, &buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(tc.style, tc.opts...)}})
			l := slog.New(h)
			l.InfoContext(spanCtx(trace.FlagsSampled), "with span")
			l.InfoContext(context.Background(), "no span")
			invalid := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid}))
			l.InfoContext(invalid, "invalid span")
			require.NoError(t, h.Flush())
			lines := buf.lines(t)
			require.Len(t, lines, 3)
			for k, v := range tc.want {
				assert.Equal(t, v, lines[0][k], k)
			}
			for _, m := range lines[1:] {
				for _, k := range allKeys {
					assert.NotContains(t, m, k, "%s: %s", m["msg"], k)
				}
			}
		})
	}
}

func TestTraceFlagsHex(t *testing.T) {
	var buf syncBuffer
	h := newBus(t, &buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(StyleOTel)}})
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: 0xab}))
	slog.New(h).InfoContext(ctx, "x")
	require.NoError(t, h.Flush())
	assert.Equal(t, "ab", buf.lines(t)[0][KeyTraceFlags])
}

func TestRegisterMetrics(t *testing.T) {
	var buf syncBuffer
	h := asyncbus.NewHandler(&buf, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	reg, err := RegisterMetrics(mp.Meter("asyncbus"), h)
	require.NoError(t, err)

	l := slog.New(h)
	const n = 25
	for i := range n {
		l.Info("m", "i", i)
	}
	l.Warn("w")
	l.Log(context.Background(), slog.LevelError+1, "e")
	l.Log(context.Background(), asyncbus.LevelFatal, "f")
	require.NoError(t, h.Flush())
	require.NoError(t, h.Close())
	require.ErrorIs(t, h.Handle(context.Background(), slog.NewRecord(ts, slog.LevelInfo, "late", 0)), asyncbus.ErrClosed)

	got := collect(t, reader)
	st, dst := h.Stats(), h.DrainerStats()
	assert.Equal(t, int64(n+4), got[MetricEnqueued][""], "enqueued counts the refused record too")
	assert.Equal(t, int64(n+3), got[MetricWritten][""])
	assert.Equal(t, map[string]int64{"trace": 0, "debug": 0, "info": n + 1, "warn": 1, "error": 1, "fatal": 1, "other": 0},
		got[MetricLogged], "by level; the record refused after Close is counted")
	assert.Equal(t, int64(0), got[MetricFailed][""])
	assert.Equal(t, int64(1), got[MetricDropped]["closed"])
	assert.Equal(t, int64(0), got[MetricDropped]["overflow"])
	assert.Equal(t, int64(dst.Batches), got[MetricBatches][""])
	assert.Equal(t, int64(st.WrittenBytes), got[MetricWrittenByte][""])
	assert.Equal(t, int64(st.Capacity), got[MetricCapacity][""])
	assert.Equal(t, int64(dst.BatchTarget), got[MetricBatchSize][""])
	assert.Equal(t, int64(0), got[MetricQueueDepth][""])
	assert.Contains(t, got, MetricQueueHigh)
	assert.Positive(t, got[MetricCapacity][""])
	assert.Equal(t, map[string]int64{"p50": st.QueueDelayP50.Microseconds(), "p99": st.QueueDelayP99.Microseconds(), "max": st.QueueDelayMax.Microseconds()},
		got[MetricQueueDelay])
	assert.Positive(t, got[MetricQueueDelay]["max"], "the batches waited")

	require.NoError(t, reg.Unregister())
	assert.Empty(t, collect(t, reader))
}

func TestRegisterMetricsErrors(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	_, err := RegisterMetrics(mp.Meter("x"), nil)
	require.Error(t, err)
	_, err = RegisterMetrics(nil, asyncbus.NewHandler(&syncBuffer{}, nil))
	require.Error(t, err)
}

// collect returns metric name → "reason", "level" or "stat" attribute (or "") → value.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				assert.True(t, d.IsMonotonic, m.Name)
				points = d.DataPoints
			case metricdata.Gauge[int64]:
				points = d.DataPoints
			case metricdata.Gauge[float64]: // MetricOccupancy: see collectFloat
				continue
			default:
				t.Fatalf("unexpected data %T for %s", m.Data, m.Name)
			}
			for _, p := range points {
				reason, ok := p.Attributes.Value("reason")
				if !ok {
					reason, ok = p.Attributes.Value("level")
				}
				if !ok {
					reason, _ = p.Attributes.Value("stat")
				}
				if out[m.Name] == nil {
					out[m.Name] = map[string]int64{}
				}
				out[m.Name][reason.AsString()] = p.Value
			}
		}
	}
	return out
}

// BenchmarkTraceContext measures the hook inside a full asyncbus Handle.
func BenchmarkTraceContext(b *testing.B) {
	for _, style := range []Style{StyleOTel, StyleECS, StyleGoogleCloud, StyleDatadog, StyleDatadog64} {
		b.Run(styleName(style), func(b *testing.B) {
			h := asyncbus.NewHandler(discard{}, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(style, WithProjectID("p"))}})
			defer h.Close()
			ctx := spanCtx(1)
			r := slog.NewRecord(ts, slog.LevelInfo, "m", 0)
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(ctx, r)
			}
		})
	}
}

// BenchmarkProcessorAsyncbus is OnEmit of a 5-attribute record into asyncbus.
func BenchmarkProcessorAsyncbus(b *testing.B) {
	h := asyncbus.NewHandler(discard{}, nil)
	defer h.Close()
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(NewProcessor(h)))
	l := lp.Logger("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		// Timestamp now, observed timestamp set by the SDK: both in the same
		// second, as in real use (the encoder caches one second per zone).
		var r log.Record
		r.SetTimestamp(time.Now())
		r.SetSeverity(log.SeverityInfo)
		r.SetBody(attribute.StringValue("m"))
		r.AddAttributes(attribute.String("a", "x"), attribute.Int("b", 1), attribute.Bool("c", true), attribute.Float64("d", 1.5), attribute.String("e", "y"))
		l.Emit(ctx, r)
	}
	_ = h.Flush()
}

func styleName(s Style) string {
	return [...]string{"otel", "ecs", "gcp", "datadog", "datadog64"}[s]
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// ownTrace returns a captured record whose own identifiers are set to
// traceID, spanID and flags (zero values leave them unset).
func ownTrace(t *testing.T, traceID trace.TraceID, spanID trace.SpanID, flags trace.TraceFlags) []sdklog.Record {
	t.Helper()
	recs := capture(t, record(log.SeverityInfo, attribute.StringValue("m")))
	require.Len(t, recs, 1)
	recs[0].SetTraceID(traceID)
	recs[0].SetSpanID(spanID)
	recs[0].SetTraceFlags(flags)
	return recs
}

// passThrough hides the *asyncbus.Handler behind another slog.Handler, so
// records take the generic Handle path instead of HandleAttrs.
type passThrough struct{ slog.Handler }

// TestRecordTraceIDsWinOverTraceContext: with TraceContext(StyleOTel) on the
// handler (the README's configuration), a record handed over by the
// Processor or the Exporter writes trace_id, span_id and trace_flags once;
// the record's own identifiers win over the context's; the context's are
// written when the record has none; other styles use other keys and keep
// writing.
func TestRecordTraceIDsWinOverTraceContext(t *testing.T) {
	otherTID := trace.TraceID{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01}
	otherSID := trace.SpanID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}
	otherCtx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: otherTID, SpanID: otherSID}))
	recordIDs := map[string]any{KeyTraceID: tid.String(), KeySpanID: sid.String(), KeyTraceFlags: "01"}
	tests := []struct {
		name    string
		style   Style
		wrap    bool // hand records to a wrapper of the asyncbus handler
		ctx     context.Context
		records func(t *testing.T) []sdklog.Record
		want    map[string]any // each key exactly once with this value
		absent  []string
	}{
		{"same ids in record and context", StyleOTel, false, spanCtx(1),
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) }, recordIDs, nil},
		{"same ids through a wrapping handler", StyleOTel, true, spanCtx(1),
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) }, recordIDs, nil},
		{"record ids differ from the context's", StyleOTel, false, otherCtx,
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) }, recordIDs, nil},
		{"record ids differ, wrapping handler", StyleOTel, true, otherCtx,
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) }, recordIDs, nil},
		{"record with a trace id only keeps the context's span out", StyleOTel, false, otherCtx,
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, trace.SpanID{}, 0) },
			map[string]any{KeyTraceID: tid.String()}, []string{KeySpanID, KeyTraceFlags}},
		{"record without ids gets the context's", StyleOTel, false, otherCtx,
			func(t *testing.T) []sdklog.Record { return ownTrace(t, trace.TraceID{}, trace.SpanID{}, 0) },
			map[string]any{KeyTraceID: otherTID.String(), KeySpanID: otherSID.String(), KeyTraceFlags: "00"}, nil},
		{"record ids without a span in the context", StyleOTel, false, context.Background(),
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) }, recordIDs, nil},
		{"ECS keys are written beside the record's", StyleECS, false, otherCtx,
			func(t *testing.T) []sdklog.Record { return ownTrace(t, tid, sid, 1) },
			map[string]any{KeyTraceID: tid.String(), KeySpanID: sid.String(), KeyTraceFlags: "01",
				KeyECSTraceID: otherTID.String(), KeyECSSpanID: otherSID.String()}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"processor", "exporter"} {
				t.Run(via, func(t *testing.T) {
					var buf syncBuffer
					h := newBus(t, &buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(tc.style)}})
					var target slog.Handler = h
					if tc.wrap {
						target = passThrough{h}
					}
					recs := tc.records(t)
					if via == "processor" {
						require.NoError(t, NewProcessor(target).OnEmit(tc.ctx, &recs[0]))
					} else {
						require.NoError(t, NewExporter(target).Export(tc.ctx, recs))
					}
					require.NoError(t, h.Flush())
					line := strings.TrimSpace(buf.String())
					m := buf.lines(t)[0]
					for k, v := range tc.want {
						assert.Equal(t, 1, strings.Count(line, `"`+k+`":`), "%s in %s", k, line)
						assert.Equal(t, v, m[k], k)
					}
					for _, k := range tc.absent {
						assert.NotContains(t, m, k)
					}
				})
			}
		})
	}
}

// TestReadmeTraceContextWithProcessor is the README's configuration end to
// end: TraceContext(StyleOTel) on the handler, the Processor behind an SDK
// LoggerProvider, a record emitted inside a span.
func TestReadmeTraceContextWithProcessor(t *testing.T) {
	var buf syncBuffer
	h := newBus(t, &buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(StyleOTel)}})
	l, lp := emitter(t, NewProcessor(h))
	l.Emit(spanCtx(1), record(log.SeverityInfo, attribute.StringValue("in span")))
	require.NoError(t, lp.Shutdown(context.Background()))
	line := strings.TrimSpace(buf.String())
	for _, k := range []string{KeyTraceID, KeySpanID, KeyTraceFlags} {
		assert.Equal(t, 1, strings.Count(line, `"`+k+`":`), "%s in %s", k, line)
	}
	m := buf.lines(t)[0]
	assert.Equal(t, tid.String(), m[KeyTraceID])
	assert.Equal(t, sid.String(), m[KeySpanID])
	assert.Equal(t, "01", m[KeyTraceFlags])
}

// TestEmptyMapWritten: an empty map, as an attribute, a body, nested in a
// map or inside a slice, keeps its key: {} in JSON, map[] in Text, Logfmt
// and Console (as slog writes an empty Go map), like an empty slice keeps
// its key as [].
func TestEmptyMapWritten(t *testing.T) {
	emit := func(t *testing.T, h *asyncbus.Handler, body attribute.Value, attrs ...attribute.KeyValue) {
		t.Helper()
		l, lp := emitter(t, NewProcessor(h))
		l.Emit(context.Background(), record(log.SeverityInfo, body, attrs...))
		require.NoError(t, lp.Shutdown(context.Background()))
	}
	cases := []struct {
		name     string
		body     attribute.Value
		attrs    []attribute.KeyValue
		wantJSON map[string]any
		wantText []string
	}{
		{"attribute", attribute.StringValue("m"),
			[]attribute.KeyValue{attribute.Map("labels"), attribute.Slice("list"), attribute.String("after", "x")},
			map[string]any{"labels": map[string]any{}, "list": []any{}, "after": "x"},
			[]string{"labels=map[]", "list=[]", "after=x"}},
		{"body", attribute.MapValue(), nil,
			map[string]any{KeyBody: map[string]any{}},
			[]string{KeyBody + "=map[]"}},
		{"nested in a map", attribute.StringValue("m"),
			[]attribute.KeyValue{attribute.Map("outer", attribute.Map("inner"), attribute.Int("n", 1))},
			map[string]any{"outer": map[string]any{"inner": map[string]any{}, "n": 1.0}},
			[]string{"outer.inner=map[]", "outer.n=1"}},
		{"inside a slice", attribute.StringValue("m"),
			[]attribute.KeyValue{attribute.Slice("list", attribute.MapValue())},
			map[string]any{"list": []any{map[string]any{}}},
			[]string{"list=[map[]]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("json", func(t *testing.T) {
				var buf syncBuffer
				emit(t, newBus(t, &buf, nil), tc.body, tc.attrs...)
				m := buf.lines(t)[0]
				for k, v := range tc.wantJSON {
					assert.Equal(t, v, m[k], k)
				}
			})
			for _, f := range []struct {
				name   string
				format asyncbus.Format
			}{{"text", asyncbus.Text}, {"logfmt", asyncbus.Logfmt}, {"console", asyncbus.Console}} {
				t.Run(f.name, func(t *testing.T) {
					var buf syncBuffer
					emit(t, newBus(t, &buf, &asyncbus.Options{Format: f.format, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}}), tc.body, tc.attrs...)
					line := buf.String()
					for _, s := range tc.wantText {
						assert.Contains(t, line, " "+s, line)
					}
				})
			}
		})
	}
}

// hangWriter blocks every Write until release is closed: an output that
// hangs (a full pipe, a stuck network file system).
type hangWriter struct{ release chan struct{} }

func (w hangWriter) Write(p []byte) (int, error) { <-w.release; return len(p), nil }

// TestExportHonoursItsDeadline: with a hung output and a full ring, an
// asyncbus handler's waits for room end at Export's deadline, with or
// without a BlockTimeout: Export returns soon after it, the records that
// found no room are dropped, counted in Stats.Dropped and reported as
// ErrDropped, and every record is offered to the handler (none is skipped
// silently). Before, a Block handler without BlockTimeout kept Export
// waiting until the output moved again.
func TestExportHonoursItsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts asyncbus.Options
	}{
		{"Block", asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4096}}},
		{"Block with BlockTimeout", asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4096, BlockTimeout: 20 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hangWriter{release: make(chan struct{})}
			opts := tc.opts
			h := asyncbus.NewHandler(w, &opts)
			e := NewExporter(h)
			// 200 records of ~300 bytes cannot fit a 4 KiB ring.
			recs := make([]log.Record, 0, 200)
			for range 200 {
				recs = append(recs, record(log.SeverityInfo, attribute.StringValue(strings.Repeat("x", 100))))
			}
			sdkRecs := capture(t, recs...)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- e.Export(ctx, sdkRecs) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // a liveness bound, far above the 100 ms deadline
				require.FailNow(t, "Export still running 10 s after its 100 ms deadline")
			}
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.ErrorIs(t, err, asyncbus.ErrDropped)
			assert.Regexp(t, `otelbridge: \d+ of 200 records failed`, err.Error())
			close(w.release) // the output moves again
			require.NoError(t, h.Close())
			st := h.Stats()
			assert.Positive(t, st.Dropped)
			assert.EqualValues(t, 200, st.Enqueued, "every record offered: queued or dropped and counted")
			assert.EqualValues(t, 200, st.Written+st.Dropped+st.Failed)
		})
	}
}

// Through a grouped handler the record's own ids land inside the group,
// where they cannot collide with the TraceContext hook's top-level fields:
// the hook keeps writing the context's ids at the top level, which log
// pipelines match on (it stood down here too, and they were lost).
func TestGroupedHandlerKeepsTopLevelTraceContext(t *testing.T) {
	var buf syncBuffer
	h := newBus(t, &buf, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: TraceContext(StyleOTel)}})
	recs := ownTrace(t, tid, sid, 1)
	require.NoError(t, NewProcessor(h.WithGroup("otel")).OnEmit(spanCtx(1), &recs[0]))
	require.NoError(t, h.Flush())
	m := buf.lines(t)[0]
	assert.Equal(t, tid.String(), m[KeyTraceID], "the hook's top-level trace_id")
	assert.Equal(t, sid.String(), m[KeySpanID])
	group, ok := m["otel"].(map[string]any)
	require.True(t, ok, "the group: %v", m)
	assert.Equal(t, tid.String(), group[KeyTraceID], "the record's own ids, in the group")
}

// TestAttributeBudgetThroughTheBridge: a record's attributes
// that come through the bridge are bounded as the handler's own are: once
// 16 MiB of attributes are written, the attribute at hand is written as
// encode.TruncatedValue and the rest are left out. (The byte bound: the
// SDK's own de-duplication of 65,536 attributes takes minutes.)
func TestAttributeBudgetThroughTheBridge(t *testing.T) {
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.ZapJSON} {
		t.Run(f.String(), func(t *testing.T) {
			var buf syncBuffer
			h := newBus(t, &buf, &asyncbus.Options{Format: f})
			l, lp := emitter(t, NewProcessor(h), sdklog.WithAttributeValueLengthLimit(-1))
			big := strings.Repeat("x", 6<<20)
			attrs := make([]attribute.KeyValue, 5)
			for i := range attrs {
				attrs[i] = attribute.String("k"+strconv.Itoa(i), big)
			}
			l.Emit(context.Background(), record(log.SeverityInfo, attribute.StringValue("wide"), attrs...))
			require.NoError(t, lp.Shutdown(context.Background()))
			out := buf.String()
			assert.Equal(t, 1, strings.Count(out, encode.TruncatedValue))
			assert.Contains(t, out, `"k2":"xxx`, "written while under 16 MiB")
			assert.Contains(t, out, `"k3":"`+encode.TruncatedValue+`"`)
			assert.NotContains(t, out, `"k4"`)
			assert.True(t, json.Valid([]byte(out)), "one valid JSON line")
		})
	}
}
