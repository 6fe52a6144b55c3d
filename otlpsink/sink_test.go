package otlpsink

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testOptions points at rc with fast retries and no environment influence.
func testOptions(rc *receiver) Options {
	return Options{
		Endpoint:     rc.srv.URL,
		Headers:      map[string]string{},
		Compression:  "none",
		Resource:     []slog.Attr{slog.String("service.name", "svc"), slog.Int("replica", 3)},
		ScopeName:    "scope",
		ScopeVersion: "1.2.3",
		RetryInitial: 5 * time.Millisecond,
		RetryMax:     20 * time.Millisecond,
		Timeout:      5 * time.Second,
	}
}

type lazyName struct{}

func (lazyName) LogValue() slog.Value { return slog.StringValue("resolved") }

func str(s string) pbValue { return pbValue{Kind: "string", Str: s} }

func i64(i int64) pbValue { return pbValue{Kind: "int", Int: i} }

func kvl(kv ...pbKV) pbValue { return pbValue{Kind: "kvlist", KV: kv} }

// seqs logs n numbered records and returns them in arrival order.
func seqOf(t *testing.T, r pbRecord) int {
	for _, a := range r.Attrs {
		if a.Key == "seq" {
			return int(a.Value.Int)
		}
	}
	t.Fatalf("record without seq: %+v", r)
	return -1
}

// requireEachOnce checks that records 0..n-1 arrived exactly once, in order.
func requireEachOnce(t *testing.T, recs []pbRecord, n int) {
	t.Helper()
	require.Len(t, recs, n)
	for i, r := range recs {
		require.Equal(t, i, seqOf(t, r))
	}
}
