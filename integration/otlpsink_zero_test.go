package integration

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// TestOTLPSinkMatchesSDKOnZeroValues: zero values of every scalar kind
// (a zero time.Duration among them), at the top level, inside a group, a
// nested group and a WithGroup, repeated under one key, are sent as
// otelslog and the SDK send them (empty keys inside groups excepted, as
// the otlpsink package doc lists).
func TestOTLPSinkMatchesSDKOnZeroValues(t *testing.T) {
	ctx := context.Background()
	ours, theirs := newParityReceiver(t), newParityReceiver(t)
	sink, err := otlpsink.NewHandler(otlpsink.Options{Endpoint: ours.srv.URL, Compression: "none", Headers: map[string]string{}}, &asyncbus.Options{})
	require.NoError(t, err)
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(theirs.srv.URL+"/v1/logs"))
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	official := otelslog.NewHandler("p", otelslog.WithLoggerProvider(lp))
	zeros := []slog.Attr{
		slog.Duration("d", 0), slog.Int("i", 0), slog.Uint64("u", 0), slog.Float64("f", 0),
		slog.Bool("b", false), slog.String("s", ""), slog.Any("a", time.Duration(0)),
	}
	var cases [][]slog.Attr
	for _, z := range zeros {
		cases = append(cases,
			[]slog.Attr{z},
			[]slog.Attr{slog.Group("g", z)},
			[]slog.Attr{slog.Group("g", slog.Int("x", 1), z)},
			[]slog.Attr{slog.Group("g", slog.Group("h", z))},
			[]slog.Attr{slog.Group("g", slog.Duration(z.Key, 5), z)},
			[]slog.Attr{slog.Group("g", z, slog.Duration(z.Key, 5))},
			[]slog.Attr{slog.Group("g", slog.String("", "empty key"), z)},
		)
	}
	for i, c := range cases {
		a, b := slog.Handler(sink), slog.Handler(official)
		if i%2 == 1 {
			a, b = a.WithGroup("w"), b.WithGroup("w")
		}
		r := slog.NewRecord(time.Unix(0, int64(i+1)), slog.LevelInfo, "m", 0)
		r.AddAttrs(c...)
		require.NoError(t, a.Handle(ctx, r.Clone()))
		require.NoError(t, b.Handle(ctx, r.Clone()))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, lp.Shutdown(ctx))
	require.Len(t, ours.recs, len(cases))
	require.Len(t, theirs.recs, len(cases))
	for i, c := range cases {
		want := normalizeKVs(kvsOf(theirs.recs[i].GetAttributes()), true)
		got := normalizeKVs(kvsOf(ours.recs[i].GetAttributes()), true)
		path, ok := sameKVs(got, want, true)
		require.True(t, ok, "case %d %v: differ at %s\notlpsink:     %v\notelslog+SDK: %v", i, c, path, got, want)
	}
}
