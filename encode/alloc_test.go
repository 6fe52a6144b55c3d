package encode

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	ref "github.com/asyncbus/asyncbus/internal/reference"
	"github.com/stretchr/testify/require"
)

// fastKindAttrs holds one attribute of every kind that must not allocate
// (KindAny with an error; any other KindAny goes through fmt or
// encoding/json, as in slog).
func fastKindAttrs() []slog.Attr {
	return []slog.Attr{
		slog.String("s", "needs \"quoting\" = \x01"),
		slog.String("plain", "value"),
		slog.Int64("i", -5),
		slog.Uint64("u", 7),
		slog.Float64("f", 1.25e-9),
		slog.Float64("nan", 0),
		slog.Bool("b", true),
		slog.Duration("d", 1500*time.Microsecond),
		slog.Time("t", fixedTime.In(tzA)),
		slog.Group("g", slog.String("k", "v"), slog.Group("h", slog.Int("deep", 1))),
		slog.Group("", slog.Int("inline", 1)),
		slog.Group("empty"),
		slog.Any("err", errNoAlloc),
		slog.Any("lv", valuer{slog.IntValue(3)}),
		slog.Any("lvg", valuer{slog.GroupValue(slog.String("k", "v"))}),
		{},
	}
}

// accessLogAttrs is a typical access-log line's attributes: the benchmark
// reference record's.
func accessLogAttrs() []slog.Attr {
	a := ref.Attrs(42)
	return a[:]
}

var errNoAlloc = fmt.Errorf("static error")

func TestZeroAllocs(t *testing.T) {
	pc := callerPC()
	recs := map[string]slog.Record{
		"access": record(fixedTime, slog.LevelInfo, "request handled", 0, accessLogAttrs()),
		"kinds":  record(fixedTime, slog.LevelWarn, "kinds", pc, fastKindAttrs()),
		"trace":  record(fixedTime, LevelTrace, "t", pc, nil),
		"offset": record(fixedTime, slog.LevelInfo+2, "o", 0, fastKindAttrs()[:3]),
	}
	extra := []slog.Attr{slog.String("trace_id", "0af7651916cd43dd8448eb211c80319c"), slog.String("span_id", "b7ad6b7169203331")}
	for _, f := range []Format{JSON, Text, Logfmt, Console, GCPJSON, ECSJSON, DatadogJSON} {
		for _, color := range []bool{false, true} {
			base := New(Options{Format: f, AddSource: true, Color: color})
			encs := map[string]*Encoder{
				"base":    base,
				"derived": base.Named("svc").WithAttrs([]slog.Attr{slog.Int("pid", 1)}).WithGroup("req").WithAttrs([]slog.Attr{slog.String("id", "x")}).WithGroup("inner"),
			}
			for en, e := range encs {
				for rn, r := range recs {
					buf := make([]byte, 0, 4096)
					e.Append(buf[:0], r, extra) // warm the time and source caches
					allocs := testing.AllocsPerRun(100, func() {
						buf = e.Append(buf[:0], r, extra)
						buf = e.AppendDropMarker(buf[:0], fixedTime, 3)
					})
					require.Zero(t, allocs, "format=%d color=%v encoder=%s record=%s", f, color, en, rn)
				}
			}
		}
	}
}

// TestTimeAttrsInOtherSecondsDoNotAllocate: a record time and time attrs in
// other seconds (an observed timestamp just behind, a deadline far ahead,
// both in turn) must not make the per-second cache allocate per record.
func TestTimeAttrsInOtherSecondsDoNotAllocate(t *testing.T) {
	for _, f := range []Format{JSON, Text, Logfmt} {
		e := New(Options{Format: f})
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		times := []time.Time{now.Add(-time.Second), now.Add(-90 * time.Minute), now.Add(48 * time.Hour), now.Add(-3 * time.Second), now.Add(-7 * time.Hour)}
		buf := make([]byte, 0, 1024)
		i := 0
		allocs := testing.AllocsPerRun(500, func() {
			r := slog.NewRecord(now, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.Time("observed", times[i%len(times)]), slog.Time("other", times[(i+2)%len(times)]))
			i++
			buf = e.Append(buf[:0], r, nil)
		})
		require.Zero(t, allocs, "format %v", f)
	}
}
