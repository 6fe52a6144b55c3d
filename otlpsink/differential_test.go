package otlpsink

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// randAttr builds a random attribute: scalars, empty keys, nested and empty
// groups, LogValuers.
func randAttr(rng *rand.Rand, depth int) slog.Attr {
	key := fmt.Sprintf("k%d", rng.IntN(6)) // repeated keys happen, as in real logs
	if rng.IntN(10) == 0 {
		key = ""
	}
	switch rng.IntN(8) {
	case 0:
		return slog.String(key, fmt.Sprintf("v%d", rng.IntN(100)))
	case 1:
		return slog.Int64(key, rng.Int64N(1<<40)-1<<39)
	case 2:
		return slog.Bool(key, rng.IntN(2) == 0)
	case 3:
		return slog.Float64(key, float64(rng.IntN(1000))/8)
	case 4:
		if rng.IntN(4) == 0 {
			return slog.Duration(key, 0) // zero values are written, as slog and the SDK write them
		}
		return slog.Duration(key, time.Duration(rng.IntN(1e9)))
	case 5:
		return slog.Any(key, lazyName{})
	default:
		if depth > 2 {
			return slog.String(key, "deep")
		}
		n := rng.IntN(4) // zero: an empty group, dropped by both
		g := make([]any, n)
		for i := range g {
			g[i] = randAttr(rng, depth+1)
		}
		a := slog.Group(key, g...)
		if key != "" && !written(a) {
			// A group left empty (its members have empty keys): otlpsink
			// leaves it out, so it does not replace an earlier attribute of
			// its key where slog's object does (documented); a key of its
			// own keeps the comparison to what both write.
			a.Key = fmt.Sprintf("hollow%d", rng.Uint64())
		}
		return a
	}
}

// written reports whether otlpsink writes a: a non-empty key, and for a
// group a member that is written (a group under an empty key is inlined).
func written(a slog.Attr) bool {
	if a.Value.Kind() != slog.KindGroup {
		return a.Key != ""
	}
	for _, m := range a.Value.Group() {
		if written(m) {
			return true
		}
	}
	return false
}

// toJSONish converts decoded OTLP attributes to what encoding/json makes of
// slog.JSONHandler's output for the same attributes. Repeated keys: JSON
// keeps the last, as here.
func toJSONish(kvs []pbKV) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value; v.Kind {
		case "string":
			m[kv.Key] = v.Str
		case "int":
			m[kv.Key] = float64(v.Int)
		case "double":
			m[kv.Key] = v.Dbl
		case "bool":
			m[kv.Key] = v.Bool
		case "kvlist":
			m[kv.Key] = toJSONish(v.KV)
		default:
			m[kv.Key] = "unexpected kind " + v.Kind
		}
	}
	return m
}

// collect is a BatchWriter that keeps every record.
type collect struct {
	mu   sync.Mutex
	recs [][]byte
}

func (c *collect) WriteBatch(recs [][]byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range recs {
		c.recs = append(c.recs, append([]byte(nil), r...))
	}
	return len(recs), nil
}
func (c *collect) Write(p []byte) (int, error) {
	_, err := c.WriteBatch([][]byte{p})
	return len(p), err
}

// TestDifferentialAgainstSlogJSON: for random attributes, WithAttrs and
// WithGroup chains, the attribute tree equals what slog.JSONHandler writes.
func TestDifferentialAgainstSlogJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		var jbuf bytes.Buffer
		jh := slog.Handler(slog.NewJSONHandler(&jbuf, &slog.HandlerOptions{
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
					return slog.Attr{}
				}
				return a
			},
		}))
		sink := &collect{}
		hv, err := openEncoded(sink, &asyncbus.Options{}, newEncoder(false, ""))
		require.NoError(t, err)
		var oh slog.Handler = hv
		for range rng.IntN(4) {
			if rng.IntN(2) == 0 {
				as := []slog.Attr{randAttr(rng, 0), randAttr(rng, 0)}
				jh, oh = jh.WithAttrs(as), oh.WithAttrs(as)
			} else {
				name := fmt.Sprintf("g%d", rng.IntN(3))
				jh, oh = jh.WithGroup(name), oh.WithGroup(name)
			}
		}
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
		for range rng.IntN(6) {
			r.AddAttrs(randAttr(rng, 0))
		}
		require.NoError(t, jh.Handle(context.Background(), r.Clone()))
		require.NoError(t, oh.Handle(context.Background(), r.Clone()))
		require.NoError(t, hv.Close())

		var want map[string]any
		require.NoError(t, json.Unmarshal(jbuf.Bytes(), &want), jbuf.String())
		withoutEmptyKeys(want)
		require.Len(t, sink.recs, 1)
		rec := sink.recs[0]
		require.True(t, isFramed(rec))
		_, n := consumeLen(rec[1:])
		got := toJSONish(decodeRecord(t, rec[1+n:]).Attrs)
		require.Equal(t, want, got, "trial %d: slog wrote %s", trial, jbuf.String())
	}
}

// withoutEmptyKeys removes from m, at every level, the members with an
// empty key (slog writes them; OTLP keys are never empty, so otlpsink drops
// them), then the groups left empty (dropped as empty groups are).
func withoutEmptyKeys(m map[string]any) {
	delete(m, "")
	for k, v := range m {
		if g, ok := v.(map[string]any); ok {
			if withoutEmptyKeys(g); len(g) == 0 {
				delete(m, k)
			}
		}
	}
}

func consumeLen(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}
