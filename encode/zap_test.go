package encode

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	ref "github.com/asyncbus/asyncbus/internal/reference"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zapTestTime is a fixed record time, in a zone with a half-hour offset so
// that the ISO 8601 and RFC 3339 zone forms differ.
var zapTestTime = time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.FixedZone("X", 5*3600+30*60))

func zapTestRecord(level slog.Level, msg string, pc uintptr, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(zapTestTime, level, msg, pc)
	r.AddAttrs(attrs...)
	return r
}

// zapAccessRecord is the ~200-byte access-log record the benchmarks use.
func zapAccessRecord() slog.Record {
	a := ref.Attrs(42)
	return zapTestRecord(slog.LevelInfo, ref.Message, 0, a[:]...)
}

// TestZapFormats pins the layout of both zap formats; the byte-for-byte
// comparison with zap itself is integration/zap_encode_test.go.
func TestZapFormats(t *testing.T) {
	stack := "main.run\n\t/src/main.go:12\nmain.main\n\t/src/main.go:5"
	rec := zapTestRecord(slog.LevelError, "failed", 0,
		slog.String("k", "v\n"), slog.Duration("d", 1500*time.Millisecond), slog.Any("error", fmt.Errorf("boom")),
		slog.String("stacktrace", stack))
	for _, tc := range []struct {
		name string
		f    Format
		want string
	}{
		{"json default", ZapJSON, `{"level":"error","ts":"2024-05-17T10:30:45+05:30","logger":"setup","msg":"failed","pid":1,"g":{"k":"v\n","d":1.5,"error":"boom"},"stacktrace":"main.run\n\t/src/main.go:12\nmain.main\n\t/src/main.go:5"}` + "\n"},
		{"json epoch", ZapJSON.WithZapTime(ZapTimeEpoch), `{"level":"error","ts":1715922045.1234567,"logger":"setup","msg":"failed","pid":1,"g":{"k":"v\n","d":1.5,"error":"boom"},"stacktrace":"main.run\n\t/src/main.go:12\nmain.main\n\t/src/main.go:5"}` + "\n"},
		{"console iso8601", ZapConsole.WithZapTime(ZapTimeISO8601), "2024-05-17T10:30:45.123+0530\tERROR\tsetup\tfailed\t{\"pid\": 1, \"g\": {\"k\": \"v\\n\", \"d\": \"1.5s\", \"error\": \"boom\"}}\n" + stack + "\n"},
		{"console epoch", ZapConsole.WithZapTime(ZapTimeEpoch), "1.7159220451234567e+09\tERROR\tsetup\tfailed\t{\"pid\": 1, \"g\": {\"k\": \"v\\n\", \"d\": \"1.5s\", \"error\": \"boom\"}}\n" + stack + "\n"},
		{"console nanos", ZapConsole.WithZapTime(ZapTimeNanos), "1715922045123456789\tERROR\tsetup\tfailed\t{\"pid\": 1, \"g\": {\"k\": \"v\\n\", \"d\": \"1.5s\", \"error\": \"boom\"}}\n" + stack + "\n"},
		{"json rfc3339nano", ZapJSON.WithZapTime(ZapTimeRFC3339Nano), `{"level":"error","ts":"2024-05-17T10:30:45.123456789+05:30","logger":"setup","msg":"failed","pid":1,"g":{"k":"v\n","d":1.5,"error":"boom"},"stacktrace":"main.run\n\t/src/main.go:12\nmain.main\n\t/src/main.go:5"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(Options{Format: tc.f}).Named("setup").WithAttrs([]slog.Attr{slog.Int("pid", 1)}).WithGroup("g")
			assert.Equal(t, tc.want, string(e.Append(nil, rec, nil)))
		})
	}
}

// TestZapLevelNames: slog's levels get zap's names as zapslog maps them
// (below Info "debug"); WithLogrLevels keeps zapr's names for logr's V
// levels below Info; WithZapLevels names Error+1 to +3 dpanic and panic.
func TestZapLevelNames(t *testing.T) {
	for _, tc := range []struct {
		l         slog.Level
		slog      string // the JSON name by default
		logr      string // with WithLogrLevels; "" when the same
		zapLevels string // with WithZapLevels; "" when the same
	}{
		{LevelTrace - 1, "debug", "Level(-9)", ""},
		{LevelTrace, "debug", "Level(-8)", ""},
		{slog.LevelDebug, "debug", "Level(-4)", ""},
		{-3, "debug", "Level(-3)", ""},
		{-2, "debug", "Level(-2)", ""},
		{-1, "debug", "", ""},
		{-300, "debug", "Level(-127)", ""},
		{slog.LevelInfo, "info", "", ""},
		{3, "info", "", ""},
		{slog.LevelWarn, "warn", "", ""},
		{slog.LevelError - 1, "warn", "", ""},
		{slog.LevelError, "error", "", ""},
		{slog.LevelError + 1, "error", "", "dpanic"},
		{slog.LevelError + 2, "error", "", "panic"},
		{slog.LevelError + 3, "error", "", "panic"},
		{LevelFatal, "fatal", "", ""},
		{LevelFatal + 5, "fatal", "", ""},
	} {
		t.Run(tc.slog+"/"+tc.l.String(), func(t *testing.T) {
			or := func(s, def string) string {
				if s == "" {
					return def
				}
				return s
			}
			r := slog.NewRecord(time.Time{}, tc.l, "m", 0)
			logr, zapLevels := or(tc.logr, tc.slog), or(tc.zapLevels, tc.slog)
			both := or(tc.logr, zapLevels)
			for _, c := range []struct {
				modify func(Format) Format
				want   string
			}{
				{func(f Format) Format { return f }, tc.slog},
				{func(f Format) Format { return f.WithZapTime(ZapTimeEpoch) }, tc.slog},
				{Format.WithLogrLevels, logr},
				{func(f Format) Format { return f.WithLogrLevels().WithZapTime(ZapTimeNanos) }, logr},
				{Format.WithZapLevels, zapLevels},
				{func(f Format) Format { return f.WithZapLevels().WithLogrLevels() }, both},
				{func(f Format) Format { return f.WithZapTime(ZapTimeEpoch).WithLogrLevels().WithZapLevels() }, both},
			} {
				for _, f := range []Format{c.modify(ZapJSON), c.modify(ZapConsole)} {
					require.True(t, f.Valid())
					want := `{"level":"` + c.want + `","msg":"m"}` + "\n"
					if f&0xff == ZapConsole {
						want = strings.ToUpper(c.want) + "\tm\n"
					}
					assert.Equal(t, want, string(New(Options{Format: f}).Append(nil, r, nil)), "format %#x", int(f))
				}
			}
		})
	}
	assert.Equal(t, JSON, JSON.WithZapLevels(), "not a zap format: unchanged")
	assert.Equal(t, Text, Text.WithLogrLevels(), "not a zap format: unchanged")
	assert.False(t, (ZapJSON.WithZapLevels().WithLogrLevels() | 1<<18).Valid())
}

// TestZapDerivation: derived encoders leave their parents unchanged, extra
// attributes stay top-level, empty namespaces are kept (zap.Namespace) and
// a console line without fields has no field object.
func TestZapDerivation(t *testing.T) {
	base := New(Options{Format: ZapConsole})
	g := base.WithGroup("g")
	a := g.WithAttrs([]slog.Attr{slog.Int("a", 1)})
	b := g.WithAttrs([]slog.Attr{slog.Int("b", 2)})
	r := zapTestRecord(slog.LevelInfo, "m", 0)
	extra := []slog.Attr{slog.String("trace_id", "t")}
	r.Time = time.Time{}
	assert.Equal(t, "INFO\tm\n", string(base.Append(nil, r, nil)))
	assert.Equal(t, "INFO\tm\t{\"g\": {}}\n", string(g.Append(nil, r, nil)))
	assert.Equal(t, "INFO\tm\t{\"trace_id\": \"t\", \"g\": {\"a\": 1}}\n", string(a.Append(nil, r, extra)))
	assert.Equal(t, "INFO\tm\t{\"g\": {\"b\": 2}}\n", string(b.Append(nil, r, nil)))
	assert.Equal(t, "INFO\tsvc.x\tm\n", string(base.Named("svc.x").Append(nil, r, nil)))
	assert.Equal(t, "INFO\tm\n", string(base.Named("svc").Named("").Append(nil, r, nil)))
	j := New(Options{Format: ZapJSON})
	assert.Equal(t, `{"level":"warn","ts":"2024-05-17T10:30:45+05:30","msg":"asyncbus: records dropped","dropped":3}`+"\n",
		string(j.Named("n").WithGroup("g").AppendDropMarker(nil, zapTestTime, 3)))
}

// TestZapReplaceAttr: ReplaceAttr applies to attributes with their groups,
// not to the built-in fields.
func TestZapReplaceAttr(t *testing.T) {
	var seen []string
	e := New(Options{Format: ZapJSON, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		seen = append(seen, fmt.Sprint(groups)+" "+a.Key)
		if a.Key == "secret" {
			a.Value = slog.StringValue("***")
		}
		return a
	}}).WithGroup("g")
	r := zapTestRecord(slog.LevelInfo, "m", 0, slog.String("secret", "x"), slog.Group("h", slog.Int("n", 1)))
	assert.Equal(t, `{"level":"info","ts":"2024-05-17T10:30:45+05:30","msg":"m","g":{"secret":"***","h":{"n":1}}}`+"\n", string(e.Append(nil, r, nil)))
	assert.Equal(t, []string{"[] time", "[g] secret", "[g h] n"}, seen)
}

func TestZapCaller(t *testing.T) {
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	r := zapTestRecord(slog.LevelInfo, "m", pcs[0])
	r.Time = time.Time{}
	got := string(New(Options{Format: ZapJSON, AddSource: true}).Append(nil, r, nil))
	assert.Regexp(t, `^\{"level":"info","caller":"encode/zap_test.go:\d+","msg":"m"\}\n$`, got)
	got = string(New(Options{Format: ZapConsole, AddSource: true}).Append(nil, r, nil))
	assert.Regexp(t, `^INFO\tencode/zap_test.go:\d+\tm\n$`, got)
}

func TestWithZapTimeOnlyForZapFormats(t *testing.T) {
	assert.Equal(t, JSON, JSON.WithZapTime(ZapTimeEpoch))
	assert.Equal(t, ZapJSON.WithZapTime(ZapTimeNanos), ZapJSON.WithZapTime(ZapTimeEpoch).WithZapTime(ZapTimeNanos))
}

// TestZapZeroAllocs: both zap formats encode scalar records, derived
// encoders, extra attributes, errors, Stringers and the drop marker
// without allocating.
func TestZapZeroAllocs(t *testing.T) {
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	recs := map[string]slog.Record{
		"access": zapAccessRecord(),
		"kinds": zapTestRecord(slog.LevelWarn, "kinds \"q\"\n", pcs[0],
			slog.String("s", "needs \"quoting\" \x01 \xff"), slog.Int64("i", -5), slog.Uint64("u", 7),
			slog.Float64("f", 1.25e-9), slog.Bool("b", true), slog.Duration("d", time.Second),
			slog.Time("t", zapTestTime), slog.Group("g", slog.String("k", "v"), slog.Group("h", slog.Int("deep", 1))),
			slog.Group("", slog.Int("inline", 1)), slog.Group("empty"), slog.Any("err", errZapNoAlloc), slog.Any("nil", nil), slog.Attr{}),
		"stack": zapTestRecord(-3, "v3", 0, slog.String("error", "e"), slog.String("stacktrace", "a\n\tb:1")),
	}
	extra := []slog.Attr{slog.String("trace_id", "0af7651916cd43dd8448eb211c80319c")}
	for _, base := range []Format{ZapJSON, ZapConsole} {
		for te := ZapTimeRFC3339; te <= ZapTimeNanos; te++ {
			e0 := New(Options{Format: base.WithZapTime(te), AddSource: true})
			encs := map[string]*Encoder{
				"base":    e0,
				"derived": e0.Named("ctrl.setup").WithAttrs([]slog.Attr{slog.Int("pid", 1)}).WithGroup("req").WithAttrs([]slog.Attr{slog.String("id", "x")}),
			}
			for en, e := range encs {
				for rn, r := range recs {
					buf := make([]byte, 0, 4096)
					buf = e.Append(buf[:0], r, extra) // warm the time and source caches
					allocs := testing.AllocsPerRun(100, func() {
						buf = e.Append(buf[:0], r, extra)
						buf = e.AppendDropMarker(buf[:0], zapTestTime, 3)
					})
					require.Zero(t, allocs, "format=%d time=%d encoder=%s record=%s", base, te, en, rn)
				}
			}
		}
	}
}

var errZapNoAlloc = fmt.Errorf("static error")

// BenchmarkZap compares the zap formats with the slog-compatible JSON
// format on the access-log record.
func BenchmarkZap(b *testing.B) {
	for _, f := range []struct {
		name string
		f    Format
	}{
		{"JSON", JSON},
		{"ZapJSON", ZapJSON},
		{"ZapJSONEpoch", ZapJSON.WithZapTime(ZapTimeEpoch)},
		{"ZapConsole", ZapConsole},
	} {
		b.Run(f.name, func(b *testing.B) {
			e := New(Options{Format: f.f}).Named("setup")
			r := zapAccessRecord()
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				buf = e.Append(buf[:0], r, nil)
			}
			b.SetBytes(int64(len(buf)))
			_, _ = io.Discard.Write(buf)
		})
	}
}

// TestZapReplaceAttrTime: ReplaceAttr on the time built-in gives custom
// layouts, removal, or another time.
func TestZapReplaceAttrTime(t *testing.T) {
	r := zapTestRecord(slog.LevelInfo, "m", 0)
	for _, tc := range []struct {
		name      string
		rep       func(slog.Attr) slog.Attr
		json, con string
	}{
		{"layout", func(a slog.Attr) slog.Attr { return slog.String(a.Key, a.Value.Time().Format("15:04")) },
			`{"level":"info","ts":"10:30","msg":"m"}`, "10:30\tINFO\tm"},
		{"removed", func(slog.Attr) slog.Attr { return slog.Attr{} },
			`{"level":"info","msg":"m"}`, "INFO\tm"},
		{"time", func(a slog.Attr) slog.Attr { return slog.Time(a.Key, a.Value.Time().UTC()) },
			`{"level":"info","ts":"2024-05-17T05:00:45Z","msg":"m"}`, "2024-05-17T05:00:45Z\tINFO\tm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := func(groups []string, a slog.Attr) slog.Attr {
				if groups == nil && a.Key == slog.TimeKey {
					return tc.rep(a)
				}
				return a
			}
			assert.Equal(t, tc.json+"\n", string(New(Options{Format: ZapJSON, ReplaceAttr: rep}).Append(nil, r, nil)))
			assert.Equal(t, tc.con+"\n", string(New(Options{Format: ZapConsole, ReplaceAttr: rep}).Append(nil, r, nil)))
		})
	}
}
