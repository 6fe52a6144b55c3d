package integration

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus/encode"
)

// zapTimeEncoders pairs each encode.ZapTime with zapcore's encoder.
var zapTimeEncoders = []struct {
	name string
	ours encode.ZapTime
	zap  zapcore.TimeEncoder
}{
	{"rfc3339", encode.ZapTimeRFC3339, zapcore.RFC3339TimeEncoder},
	{"rfc3339nano", encode.ZapTimeRFC3339Nano, zapcore.RFC3339NanoTimeEncoder},
	{"iso8601", encode.ZapTimeISO8601, zapcore.ISO8601TimeEncoder},
	{"epoch", encode.ZapTimeEpoch, zapcore.EpochTimeEncoder},
	{"millis", encode.ZapTimeMillis, zapcore.EpochMillisTimeEncoder},
	{"nanos", encode.ZapTimeNanos, zapcore.EpochNanosTimeEncoder},
}

// zapReference returns zap configured as controller-runtime configures it
// (production JSON or development console encoder config, the given time
// encoder, every level enabled), behind zapr's slog handler.
func zapReference(w *bytes.Buffer, console bool, te zapcore.TimeEncoder, name string) slog.Handler {
	var enc zapcore.Encoder
	if console {
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = te
		enc = zapcore.NewConsoleEncoder(cfg)
	} else {
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = te
		enc = zapcore.NewJSONEncoder(cfg)
	}
	core := zapcore.NewCore(enc, zapcore.AddSync(w), zap.LevelEnablerFunc(func(zapcore.Level) bool { return true }))
	return logr.ToSlogHandler(zapr.NewLogger(zap.New(core).Named(name)))
}

type zapDiffStringer struct{ s string }

func (s zapDiffStringer) String() string { return s.s }

type zapDiffStruct struct {
	A int               `json:"a"`
	B string            `json:"b,omitempty"`
	M map[string]string `json:"m"`
}

// randZapString mixes plain text with what needs escaping: quotes,
// backslashes, control bytes, DEL, invalid UTF-8, U+2028, HTML characters.
func randZapString(r *rand.Rand) string {
	pieces := []string{"a", "hello", " ", "\"", "\\", "\n", "\t", "\r", "\x00", "\x1f", "\x7f", "\xff", "\xe2\x80", "\u2028", "<&>", "é", "日本", "\ufffd", "=", ":", "{"}
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randZapValue(r *rand.Rand, depth int) slog.Value {
	locs := []*time.Location{time.UTC, time.FixedZone("X", 7*3600+30*60), time.FixedZone("Y", -5*3600)}
	switch r.IntN(14) {
	case 0:
		return slog.StringValue(randZapString(r))
	case 1:
		return slog.Int64Value(r.Int64() - math.MaxInt64/2)
	case 2:
		return slog.Uint64Value(r.Uint64())
	case 3:
		fs := []float64{0, 1.5, -2.25, 1e21, 1e-7, 123456789.125, math.NaN(), math.Inf(1), math.Inf(-1), r.Float64() * 1e6}
		return slog.Float64Value(fs[r.IntN(len(fs))])
	case 4:
		return slog.BoolValue(r.IntN(2) == 0)
	case 5:
		return slog.DurationValue(time.Duration(r.Int64N(int64(10 * time.Hour))))
	case 6:
		return slog.TimeValue(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(locs[r.IntN(len(locs))]))
	case 7:
		if depth > 2 {
			return slog.IntValue(1)
		}
		n := r.IntN(3)
		as := make([]slog.Attr, n)
		for i := range as {
			as[i] = randZapAttr(r, depth+1)
		}
		return slog.GroupValue(as...)
	case 8:
		return slog.AnyValue(errors.New(randZapString(r)))
	case 9:
		return slog.AnyValue(zapDiffStringer{randZapString(r)})
	case 10:
		return slog.AnyValue(zapDiffStruct{A: r.IntN(100), B: randZapString(r), M: map[string]string{"k": randZapString(r)}})
	case 11:
		return slog.AnyValue([]string{randZapString(r), "x"})
	case 12:
		return slog.AnyValue([]int{1, -2, 3})
	default:
		return slog.AnyValue([]byte(randZapString(r)))
	}
}

func randZapAttr(r *rand.Rand, depth int) slog.Attr {
	key := []string{"k", "key", "", "a b", "q\"uote", "ünï", "stacktrace", randZapString(r)}[r.IntN(8)]
	return slog.Attr{Key: key, Value: randZapValue(r, depth)}
}

// TestZapEncodingsMatchZap is a randomized differential test: encode's
// ZapJSON and ZapConsole against zap's own encoders behind zapr, for every
// time encoding, with WithAttrs, WithGroup, names, callers and every value kind.
func TestZapEncodingsMatchZap(t *testing.T) {
	levels := []slog.Level{-1, -2, -3, -10, 0, 2, slog.LevelWarn, slog.LevelWarn + 1, slog.LevelError, slog.LevelError + 3}
	for _, console := range []bool{false, true} {
		for _, te := range zapTimeEncoders {
			t.Run(fmt.Sprintf("console=%v/%s", console, te.name), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(te.ours), 7))
				// zapr's slog handler names levels below Info as logr's V levels.
				format := encode.ZapJSON.WithLogrLevels()
				if console {
					format = encode.ZapConsole.WithLogrLevels()
				}
				for iter := range 400 {
					var want bytes.Buffer
					name := []string{"", "setup", "ctrl.sub", randZapString(r)}[r.IntN(4)]
					withPC := r.IntN(3) == 0
					ref := zapReference(&want, console, te.zap, name)
					enc := encode.New(encode.Options{Format: format.WithZapTime(te.ours), AddSource: withPC}).Named(name)
					// The same derivation steps on both sides.
					for range r.IntN(4) {
						switch r.IntN(3) {
						case 0:
							as := []slog.Attr{randZapAttr(r, 0), randZapAttr(r, 0)}
							ref = ref.WithAttrs(as)
							enc = enc.WithAttrs(as)
						case 1:
							g := []string{"g", "grp", "a\"b"}[r.IntN(3)]
							ref = ref.WithGroup(g)
							enc = enc.WithGroup(g)
						}
					}
					ts := time.Unix(1700000000+r.Int64N(1e8), r.Int64N(1e9)).In([]*time.Location{time.UTC, time.FixedZone("E", 3600)}[r.IntN(2)])
					var pc uintptr
					if withPC {
						var pcs [1]uintptr
						runtime.Callers(1, pcs[:])
						pc = pcs[0]
					}
					rec := slog.NewRecord(ts, levels[r.IntN(len(levels))], randZapString(r), pc)
					for range r.IntN(6) {
						rec.AddAttrs(randZapAttr(r, 0))
					}
					if rec.NumAttrs() > 0 {
						// zapr has no entry stack on this path: keep a
						// trailing "stacktrace" attribute out of the comparison.
						var last slog.Attr
						rec.Attrs(func(a slog.Attr) bool { last = a; return true })
						if last.Key == "stacktrace" && last.Value.Kind() == slog.KindString {
							rec.AddAttrs(slog.Int("end", 1))
						}
					}
					require.NoError(t, ref.Handle(t.Context(), rec))
					got := enc.Append(nil, rec, nil)
					require.Equal(t, want.String(), string(got), "iteration %d", iter)
				}
			})
		}
	}
}

// TestZapLevelNamesMatchZapslog: without WithLogrLevels, ZapJSON and
// ZapConsole name slog's levels as zap's own slog handler (zapslog) maps
// them onto zap's levels, over the whole range (LevelFatal and above
// aside, which zapslog writes as "error" and encode as "fatal").
func TestZapLevelNamesMatchZapslog(t *testing.T) {
	for _, console := range []bool{false, true} {
		format, cfg, newEnc := encode.ZapJSON, zap.NewProductionEncoderConfig(), zapcore.NewJSONEncoder
		if console {
			format, cfg, newEnc = encode.ZapConsole, zap.NewDevelopmentEncoderConfig(), zapcore.NewConsoleEncoder
		}
		cfg.TimeKey, cfg.CallerKey, cfg.StacktraceKey = "", "", ""
		for l := slog.Level(-130); l < encode.LevelFatal; l++ {
			var want bytes.Buffer
			core := zapcore.NewCore(newEnc(cfg), zapcore.AddSync(&want), zap.LevelEnablerFunc(func(zapcore.Level) bool { return true }))
			rec := slog.NewRecord(time.Time{}, l, "m", 0)
			require.NoError(t, zapslog.NewHandler(core).Handle(t.Context(), rec))
			got := encode.New(encode.Options{Format: format}).Append(nil, rec, nil)
			require.Equal(t, want.String(), string(got), "console %v, level %v", console, l)
		}
	}
}
