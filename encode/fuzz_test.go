package encode

import (
	"encoding/json"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func FuzzJSON(f *testing.F) {
	f.Add("msg", "key", "value", "group", int64(1), 1.5, int64(0))
	f.Add("", "", "", "", int64(-1), math.NaN(), int64(-62135596800))
	f.Add("<html>&\u2028", "k\x00\"", "\xff\xfe\u2029\\", "g\n", int64(math.MinInt64), math.Inf(1), int64(253402300800))
	f.Fuzz(func(t *testing.T, msg, key, val, group string, n int64, fl float64, sec int64) {
		tm := time.Unix(sec%(1<<40), n%1e9).UTC()
		attrs := []slog.Attr{slog.String(key, val), slog.Int64("n", n), slog.Float64("f", fl), slog.Time("t", tm)}
		r := record(fixedTime, slog.Level(n%20), msg, 0, []slog.Attr{{Key: "g", Value: slog.GroupValue(attrs...)}})
		var chain []step
		if group != "" {
			chain = []step{{group: group}, {attrs: []slog.Attr{slog.String(key, val)}}}
		}
		got := ours(JSON, false, nil, chain, r, true)
		requireSame(t, reference(t, JSON, false, nil, chain, r), got, "fuzz")
		require.True(t, json.Valid([]byte(got)), "%q", got)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(got), &m))
		fg := fixUTF8(group)
		if fg == "time" || fg == "level" || fg == "msg" || fixUTF8(key) == "g" {
			return // duplicate keys: the last one wins when decoding
		}
		require.Equal(t, fixUTF8(msg), m["msg"])
		root := m
		if group != "" {
			root = m[fg].(map[string]any)
			require.Equal(t, fixUTF8(val), root[fixUTF8(key)])
		}
		g := root["g"].(map[string]any)
		if key != "n" && key != "f" && key != "t" {
			require.Equal(t, fixUTF8(val), g[fixUTF8(key)])
		}
		require.Equal(t, float64(n), g["n"])
	})
}

func FuzzLogfmt(f *testing.F) {
	f.Add("msg", "key", "value", "group", int64(1), 1.5)
	f.Add("", "", "", "", int64(-1), math.NaN())
	f.Add("a=b \"c\"", "k =\"\x7f", "\xff\xfe\u2028 \\", "g\tx\u00a0", int64(math.MinInt64), math.Inf(-1))
	f.Fuzz(func(t *testing.T, msg, key, val, group string, n int64, fl float64) {
		e := New(Options{Format: Logfmt})
		if group != "" {
			e = e.WithGroup(group)
		}
		r := record(fixedTime, slog.Level(n%20), msg, 0, []slog.Attr{slog.String(key, val), slog.Int64("n", n), slog.Float64("f", fl)})
		pairs := decodeLogfmt(t, e.Append(nil, r, nil))
		prefix := ""
		if group != "" {
			prefix = sanitizeKey(group) + "."
		}
		fullKey := sanitizeKey(key)
		if key == "" {
			fullKey = ""
			if prefix == "" {
				fullKey = "_"
			}
		}
		require.Len(t, pairs, 6)
		require.Equal(t, kv{"msg", fixUTF8(msg)}, pairs[2])
		require.Equal(t, kv{prefix + fullKey, fixUTF8(val)}, pairs[3])
		require.Equal(t, kv{prefix + "n", slog.Int64Value(n).String()}, pairs[4])
		require.Equal(t, kv{prefix + "f", slog.Float64Value(fl).String()}, pairs[5])
	})
}

func FuzzText(f *testing.F) {
	f.Add("msg", "key", "value", "group")
	f.Add("a=b", "k \"", "\xff\u2028", "g.h")
	f.Fuzz(func(t *testing.T, msg, key, val, group string) {
		r := record(fixedTime, slog.LevelInfo, msg, 0, []slog.Attr{slog.String(key, val), slog.Group(group, slog.String(key, val))})
		chain := []step{{group: group}, {attrs: []slog.Attr{slog.String(key, val)}}}
		requireSame(t, reference(t, Text, false, nil, chain, r), ours(Text, false, nil, chain, r, true), "fuzz")
	})
}
