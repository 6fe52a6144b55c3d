package otlpsink

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/asyncbus/asyncbus"
)

// derefErr is an error whose Error method dereferences its receiver, the
// common shape of a typed nil *T stored in an error interface.
type derefErr struct{ msg string }

func (e *derefErr) Error() string { return e.msg }

// panicErr is an error whose Error method panics on a valid receiver.
type panicErr struct{}

func (panicErr) Error() string { panic("boom") }

// slogJSONValue is the text slog.JSONHandler writes for the attribute
// err=v, decoded from JSON.
func slogJSONValue(t *testing.T, v any) string {
	t.Helper()
	var sb strings.Builder
	slog.New(slog.NewJSONHandler(&sb, &slog.HandlerOptions{ReplaceAttr: dropBuiltins})).Info("", "err", v)
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(sb.String()), &m), sb.String())
	return m["err"]
}

func dropBuiltins(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
		return slog.Attr{}
	}
	return a
}

func TestErrorWhoseErrorPanicsIsWrittenAsSlogDoes(t *testing.T) {
	var nilPtr *derefErr
	cases := map[string]struct {
		v    any
		want pbValue
		slog bool // want is also slog.JSONHandler's text for v
	}{
		"typed nil pointer error":   {v: error(nilPtr), want: str("<nil>"), slog: true},
		"Error panics":              {v: error(panicErr{}), want: str("!PANIC: boom"), slog: true},
		"working error":             {v: errors.New("fine"), want: str("fine"), slog: true},
		"typed nil inside []any":    {v: []any{error(nilPtr)}, want: pbValue{Kind: "array", Arr: []pbValue{str("<nil>")}}},
		"typed nil in fmt fallback": {v: struct{ E error }{nilPtr}, want: str("{E:<nil>}")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t)
			h, err := NewHandler(testOptions(rc), nil)
			require.NoError(t, err)
			require.NotPanics(t, func() { slog.New(h).Info("m", "err", tc.v) })
			require.NoError(t, h.Close())
			recs := rc.records()
			require.Len(t, recs, 1)
			require.NotEmpty(t, recs[0].Attrs)
			got := recs[0].Attrs[0] // an error at the top level is the record's exception.message
			if _, isErr := tc.v.(error); isErr {
				assert.Equal(t, "exception.message", got.Key)
			}
			assert.Equal(t, tc.want, got.Value)
			if tc.slog {
				assert.Equal(t, tc.want.Str, slogJSONValue(t, tc.v), "slog's own text")
			}
		})
	}
}

// TestInvalidUTF8IsReplacedAsSlogDoes: proto3 strings must be valid UTF-8
// (google.golang.org/protobuf refuses the whole request otherwise), so
// every string field gets each invalid byte replaced with U+FFFD, the text
// slog.JSONHandler writes for the same input.
func TestInvalidUTF8IsReplacedAsSlogDoes(t *testing.T) {
	inputs := map[string]string{
		"stray bytes":         "file \xff\xfe",
		"truncated sequence":  "/tmp/\xc3",
		"half a 3-byte rune":  "a\xe2\x82b",
		"surrogate half":      "\xed\xa0\x80",
		"valid U+FFFD kept":   "ok \uFFFD",
		"valid multibyte":     "héllo ✓",
		"invalid after valid": "é\x80",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want := slogJSONValue(t, in)
			require.True(t, utf8.ValidString(want), "slog's text %q", want)
			rc := newReceiver(t)
			o := testOptions(rc)
			o.Resource = []slog.Attr{slog.String("service.name", in)}
			o.ScopeName = in
			s, err := NewSink(o)
			require.NoError(t, err)
			h, err := s.NewHandler(nil)
			require.NoError(t, err)
			slog.New(h).Info(in, in, in, "list", []string{in}, "err", errors.New(in), slog.Group("g", slog.Group(in, "k", in)))
			require.NoError(t, h.Flush())       // the handler's request first
			_, err = s.Write([]byte(in + "\n")) // a foreign record: its text is the body
			require.NoError(t, err)
			require.NoError(t, h.Close())
			reqs := rc.requests()
			require.Len(t, reqs, 2)
			for _, r := range reqs {
				assert.Equal(t, want, r.ScopeName)
				assert.Equal(t, []pbKV{{Key: "service.name", Value: str(want)}}, r.Resource)
			}
			require.Len(t, reqs[0].Records, 1)
			rec := reqs[0].Records[0]
			assert.Equal(t, str(want), rec.Body)
			assert.Equal(t, []pbKV{
				{Key: want, Value: str(want)},
				{Key: "list", Value: pbValue{Kind: "array", Arr: []pbValue{str(want)}}},
				{Key: "g", Value: kvl(pbKV{Key: want, Value: kvl(pbKV{Key: "k", Value: str(want)})})},
				{Key: "exception.message", Value: str(want)},
				{Key: "exception.type", Value: str("*errors.errorString")},
			}, rec.Attrs)
			require.Len(t, reqs[1].Records, 1)
			assert.Equal(t, str(want), reqs[1].Records[0].Body)
		})
	}
}

func TestFieldByField(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{Level: slog.LevelDebug - 8})
	require.NoError(t, err)
	defer h.Close()

	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("1112131415161718")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	log := slog.New(h).With("svc", "api").WithGroup("req").With("id", 7).WithGroup("inner")

	r := slog.NewRecord(ts, slog.LevelWarn+2, "hello", 0)
	r.AddAttrs(
		slog.String("s", "x"), slog.Bool("b", true), slog.Int("i", -5),
		slog.Uint64("big", math.MaxUint64), slog.Float64("f", 1.5),
		slog.Duration("d", 3*time.Millisecond), slog.Time("t", ts),
		slog.Any("err", errors.New("boom")), slog.Any("raw", []byte{1, 2}),
		slog.Any("list", []string{"a", "b"}), slog.Any("lazy", lazyName{}),
		slog.Group("g", slog.Int("x", 1), slog.Group("empty")),
		slog.Group("", slog.Int("inlined", 2)),
		slog.Attr{}, // ignored
		slog.Any("nil", nil),
	)
	require.NoError(t, log.Handler().Handle(ctx, r))
	// Empty groups from WithGroup are dropped when the record has no attrs.
	slog.New(h).WithGroup("unused").Log(context.Background(), slog.LevelDebug-8, "bare")
	slog.New(h).Error("fatalish", "k", "v")
	require.NoError(t, h.Flush())

	recs := rc.records()
	require.Len(t, recs, 3)
	reqs := rc.requests()
	assert.Equal(t, []pbKV{{"service.name", str("svc")}, {"replica", i64(3)}}, reqs[0].Resource)
	assert.Equal(t, "scope", reqs[0].ScopeName)
	assert.Equal(t, "1.2.3", reqs[0].ScopeVersion)

	got := recs[0]
	assert.Equal(t, uint64(ts.UnixNano()), got.Time)
	assert.InDelta(t, float64(time.Now().UnixNano()), float64(got.Observed), float64(time.Minute))
	assert.Equal(t, 15, got.Severity) // WARN+2 = 6, +9
	assert.Equal(t, "WARN+2", got.SeverityText)
	assert.Equal(t, str("hello"), got.Body)
	assert.Equal(t, tid[:], got.TraceID)
	assert.Equal(t, sid[:], got.SpanID)
	assert.Equal(t, uint32(1), got.Flags)
	want := []pbKV{
		{"svc", str("api")},
		{"req", kvl(
			pbKV{"id", i64(7)},
			pbKV{"inner", kvl(
				pbKV{"s", str("x")},
				pbKV{"b", pbValue{Kind: "bool", Bool: true}},
				pbKV{"i", i64(-5)},
				pbKV{"big", str("18446744073709551615")},
				pbKV{"f", pbValue{Kind: "double", Dbl: 1.5}},
				pbKV{"d", i64(int64(3 * time.Millisecond))},
				pbKV{"t", i64(ts.UnixNano())},
				pbKV{"raw", pbValue{Kind: "bytes", Bytes: []byte{1, 2}}},
				pbKV{"list", pbValue{Kind: "array", Arr: []pbValue{str("a"), str("b")}}},
				pbKV{"lazy", str("resolved")},
				pbKV{"g", kvl(pbKV{"x", i64(1)})},
				pbKV{"inlined", i64(2)},
				pbKV{"nil", pbValue{Kind: "empty"}},
			)},
		)},
		// An error at a handler level, here under two WithGroups, is the
		// record's exception, as otelslog makes it.
		{"exception.message", str("boom")},
		{"exception.type", str("*errors.errorString")},
	}
	assert.Equal(t, want, got.Attrs)

	assert.Equal(t, 1, recs[1].Severity) // DEBUG-8 clamps to TRACE
	assert.Equal(t, "DEBUG-8", recs[1].SeverityText)
	assert.Empty(t, recs[1].Attrs)
	assert.Empty(t, recs[1].TraceID)
	assert.Equal(t, 17, recs[2].Severity)
	assert.Equal(t, "ERROR", recs[2].SeverityText)
	assert.Equal(t, []pbKV{{"k", str("v")}}, recs[2].Attrs)
}

func TestSeverityAndLevelText(t *testing.T) {
	for _, tc := range []struct {
		l    slog.Level
		sev  int
		text string
	}{
		{slog.LevelDebug - 4, 1, "DEBUG-4"}, {slog.LevelDebug, 5, "DEBUG"}, {slog.LevelInfo, 9, "INFO"},
		{slog.LevelInfo + 1, 10, "INFO+1"}, {slog.LevelWarn, 13, "WARN"}, {slog.LevelError, 17, "ERROR"},
		{slog.LevelError + 4, 21, "ERROR+4"}, {slog.LevelError + 100, 24, "ERROR+100"},
		{slog.Level(math.MaxInt), 24, slog.Level(math.MaxInt).String()}, {slog.Level(math.MinInt), 1, slog.Level(math.MinInt).String()},
	} {
		assert.Equal(t, tc.sev, severity(tc.l), tc.l)
		assert.Equal(t, tc.text, string(appendLevelText(nil, tc.l)))
		assert.Equal(t, tc.l.String(), tc.text)
	}
}

func TestAddSource(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{AddSource: true})
	require.NoError(t, err)
	slog.New(h).Info("here") // the line below is checked
	_, file, line, _ := runtime.Caller(0)
	require.NoError(t, h.Close())
	recs := rc.records()
	require.Len(t, recs, 1)
	require.Len(t, recs[0].Attrs, 3)
	assert.Equal(t, pbKV{"code.file.path", str(file)}, recs[0].Attrs[0])
	assert.Equal(t, "code.function.name", recs[0].Attrs[1].Key)
	assert.Contains(t, recs[0].Attrs[1].Value.Str, "TestAddSource")
	assert.Equal(t, pbKV{"code.line.number", i64(int64(line - 1))}, recs[0].Attrs[2])

	hv, err := openEncoded(discardBatches{}, &asyncbus.Options{AddSource: true}, newEncoder(true, ""))
	require.NoError(t, err)
	log := slog.New(hv)
	allocs := testing.AllocsPerRun(1000, func() { log.Info("cached source") })
	assert.Zero(t, allocs, "the source of a PC is resolved once")
}

func TestNamedLoggerAndContextHook(t *testing.T) {
	rc := newReceiver(t)
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{
		Encoding: asyncbus.EncodingOptions{LoggerKey: "component"},
		Features: asyncbus.FeatureOptions{Context: func(_ context.Context, w *asyncbus.FieldWriter) { w.AddString("tenant", "t1") }},
	})
	require.NoError(t, err)
	slog.New(h.Named("db").Named("pool")).Info("named", "k", 1)
	require.NoError(t, h.Close())
	recs := rc.records()
	require.Len(t, recs, 1)
	assert.Equal(t, []pbKV{{"component", str("db.pool")}, {"tenant", str("t1")}, {"k", i64(1)}}, recs[0].Attrs)
}
