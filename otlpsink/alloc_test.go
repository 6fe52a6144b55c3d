package otlpsink

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
)

// discardBatches is a BatchWriter that accepts and forgets every batch.
type discardBatches struct{}

func (discardBatches) WriteBatch(recs [][]byte) (int, error) { return len(recs), nil }
func (discardBatches) Write(p []byte) (int, error)           { return len(p), nil }

func referenceRecord() slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request served", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200),
		slog.Duration("took", time.Millisecond), slog.Bool("cached", false),
		slog.Any("err", errors.New("none")), slog.Group("user", slog.String("id", "u1"), slog.Float64("score", 0.5)))
	return r
}

func spanContext() context.Context {
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("1112131415161718")
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
}

func TestEncoderAllocatesNothing(t *testing.T) {
	enc := newEncoder(false, "").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("g")
	r := referenceRecord()
	ctx := spanContext()
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(1000, func() {
		buf = enc.AppendRecord(buf[:0], ctx, r, "", nil)
	})
	assert.Zero(t, allocs)
}

func TestHandleAllocatesNothing(t *testing.T) {
	hv, err := openEncoded(discardBatches{}, &asyncbus.Options{}, newEncoder(false, ""))
	require.NoError(t, err)
	h := hv
	defer h.Close()
	log := slog.New(h).With("svc", "api").WithGroup("req")
	ctx := spanContext()
	allocs := testing.AllocsPerRun(1000, func() {
		log.InfoContext(ctx, "request served", "method", "GET", "status", 200, "took", time.Millisecond)
	})
	assert.Zero(t, allocs)
}

func BenchmarkEncoder(b *testing.B) {
	enc := newEncoder(false, "")
	r := referenceRecord()
	ctx := spanContext()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.AppendRecord(buf[:0], ctx, r, "", nil)
	}
}
