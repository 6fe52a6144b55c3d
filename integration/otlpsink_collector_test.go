//go:build collector

package integration

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// TestOTLPSinkIntoCollector sends records through otlpsink into the real
// Collector receiver and checks every field as the Collector decoded it.
func TestOTLPSinkIntoCollector(t *testing.T) {
	sink := new(consumertest.LogsSink)
	url := startReceiver(t, sink)
	h, err := otlpsink.NewHandler(otlpsink.Options{
		Endpoint: url, Compression: "gzip", Headers: map[string]string{},
		Resource:  []slog.Attr{slog.String("service.name", "checkout"), slog.Int("replica", 2)},
		ScopeName: "integration", ScopeVersion: "v9",
	}, &asyncbus.Options{Level: slog.LevelDebug})
	require.NoError(t, err)

	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid := trace.SpanID{8, 7, 6, 5, 4, 3, 2, 1}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	ts := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	log := slog.New(h).With("svc", "api").WithGroup("req")
	r := slog.NewRecord(ts, slog.LevelError, "payment failed", 0)
	r.AddAttrs(slog.String("s", "x"), slog.Bool("b", true), slog.Int("i", 42), slog.Float64("f", 2.5),
		slog.Any("raw", []byte("ab")), slog.Any("list", []int{1, 2}), slog.Any("err", errors.New("declined")),
		slog.Group("card", slog.String("brand", "visa")))
	require.NoError(t, log.Handler().Handle(ctx, r))
	slog.New(h).Debug("plain")
	require.NoError(t, h.Close())

	lds := sink.AllLogs()
	require.NotEmpty(t, lds)
	res := lds[0].ResourceLogs().At(0)
	assert.Equal(t, map[string]any{"service.name": "checkout", "replica": int64(2)}, res.Resource().Attributes().AsRaw())
	sl := res.ScopeLogs().At(0)
	assert.Equal(t, "integration", sl.Scope().Name())
	assert.Equal(t, "v9", sl.Scope().Version())

	recs := logRecords(sink)
	require.Len(t, recs, 2)
	got := recs[0]
	assert.Equal(t, ts.UnixNano(), got.Timestamp().AsTime().UnixNano())
	assert.NotZero(t, got.ObservedTimestamp())
	assert.Equal(t, plog.SeverityNumberError, got.SeverityNumber())
	assert.Equal(t, "ERROR", got.SeverityText())
	assert.Equal(t, pcommon.ValueTypeStr, got.Body().Type())
	assert.Equal(t, "payment failed", got.Body().Str())
	assert.Equal(t, [16]byte(tid), [16]byte(got.TraceID()))
	assert.Equal(t, [8]byte(sid), [8]byte(got.SpanID()))
	assert.Equal(t, plog.DefaultLogRecordFlags.WithIsSampled(true), got.Flags())
	// The error becomes the record's exception, at the top level, as
	// otelslog and the SDK write it (even under WithGroup).
	assert.Equal(t, map[string]any{
		"svc":               "api",
		"exception.message": "declined",
		"exception.type":    "*errors.errorString",
		"req": map[string]any{
			"s": "x", "b": true, "i": int64(42), "f": 2.5, "raw": []byte("ab"),
			"list": []any{int64(1), int64(2)},
			"card": map[string]any{"brand": "visa"},
		},
	}, got.Attributes().AsRaw())
	req, _ := got.Attributes().Get("req")
	raw, _ := req.Map().Get("raw")
	assert.Equal(t, pcommon.ValueTypeBytes, raw.Type())
	assert.Equal(t, plog.SeverityNumberDebug, recs[1].SeverityNumber())
	assert.Equal(t, "plain", recs[1].Body().Str())
}

// TestOTLPSinkCollectorUnavailableForAWhile: the Collector's pipeline
// refuses the first requests (the receiver answers 503); nothing is lost.
func TestOTLPSinkCollectorUnavailableForAWhile(t *testing.T) {
	sink := new(consumertest.LogsSink)
	var mu sync.Mutex
	refusals := 0
	flaky, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		mu.Lock()
		defer mu.Unlock()
		if refusals < 5 {
			refusals++
			return errors.New("pipeline down") // not permanent: the receiver answers 503
		}
		return sink.ConsumeLogs(ctx, ld)
	})
	require.NoError(t, err)
	url := startLogsReceiver(t, flaky)
	s, err := otlpsink.NewSink(otlpsink.Options{Endpoint: url, RetryInitial: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	require.NoError(t, err)
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	const n = 3000
	for i := range n {
		slog.New(h).Info("rec", "seq", i)
	}
	require.NoError(t, h.Close())

	seen := make([]int, n)
	for _, r := range logRecords(sink) {
		v, ok := r.Attributes().Get("seq")
		require.True(t, ok)
		seen[v.Int()]++
	}
	for i, c := range seen {
		require.Equal(t, 1, c, "record %d", i)
	}
	assert.EqualValues(t, 5, s.Stats().Retries)
	assert.EqualValues(t, n, h.Stats().Written)
}

// startLogsReceiver is startReceiver for any consumer.
func startLogsReceiver(t *testing.T, next consumer.Logs) string {
	return startLogsReceiverAt(t, next, freeAddr(t))
}

// startLogsReceiverAt runs otlpreceiver (HTTP only) on addr.
func startLogsReceiverAt(t *testing.T, next consumer.Logs, addr string) string {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	httpCfg := cfg.Protocols.HTTP.GetOrInsertDefault()
	httpCfg.ServerConfig.NetAddr.Endpoint = addr
	cfg.Protocols.HTTP = configoptional.Some(*httpCfg)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, rcv.Shutdown(context.Background())) })
	return "http://" + addr
}
