package otlpsink

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzEncoderRoundTrip: any message, keys, string, int and float values
// encode to a well-framed LogRecord that decodes back to the same values,
// strings as slog.JSONHandler writes them (invalid UTF-8 replaced).
func FuzzEncoderRoundTrip(f *testing.F) {
	f.Add("msg", "k", "v", int64(-1), 1.5, "g", int(slog.LevelInfo))
	f.Add("", "", "\xff\x00", int64(math.MinInt64), math.Inf(-1), "", -100)
	f.Add("m", "k", "", int64(0), math.NaN(), "g", math.MaxInt)
	f.Fuzz(func(t *testing.T, msg, key, sval string, ival int64, fval float64, group string, level int) {
		if key == "" || group == "" {
			key, group = key+"k", group+"g" // empty keys and groups follow slog's rules (tested elsewhere)
		}
		enc := newEncoder(false, "").WithGroup(group)
		r := slog.NewRecord(time.Unix(0, 1), slog.Level(level), msg, 0)
		r.AddAttrs(slog.String(key, sval), slog.Int64("i", ival), slog.Float64("f", fval))
		b := enc.AppendRecord(nil, context.Background(), r, "", nil)
		require.True(t, isFramed(b))
		_, n := consumeLen(b[1:])
		got := decodeRecord(t, b[1+n:])
		require.Equal(t, str(slogJSONValue(t, msg)), got.Body)
		require.Equal(t, severity(slog.Level(level)), got.Severity)
		require.Equal(t, slog.Level(level).String(), got.SeverityText)
		require.Len(t, got.Attrs, 1)
		require.Equal(t, slogJSONValue(t, group), got.Attrs[0].Key)
		// Keys are unique: a repeated key keeps its first position and
		// takes the last value.
		want := []pbKV{{slogJSONValue(t, key), str(slogJSONValue(t, sval))}}
		for _, kv := range []pbKV{{"i", i64(ival)}, {"f", pbValue{}}} {
			if kv.Key == want[0].Key {
				want[0].Value = kv.Value
				continue
			}
			want = append(want, kv)
		}
		got2 := got.Attrs[0].Value.KV
		require.Len(t, got2, len(want))
		for i, kv := range want {
			require.Equal(t, kv.Key, got2[i].Key)
			if kv.Key == "f" {
				require.Equal(t, math.Float64bits(fval), math.Float64bits(got2[i].Value.Dbl))
				continue
			}
			require.Equal(t, kv.Value, got2[i].Value)
		}
	})
}
