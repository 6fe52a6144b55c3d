package journald

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// encodeEntry encodes r with enc and checks the recordTag framing and
// the protocol, returning the entry's bytes and fields.
func encodeEntry(t *testing.T, enc asyncbus.Encoder, r slog.Record, name string, extra ...slog.Attr) ([]byte, []field) {
	t.Helper()
	b := enc.AppendRecord(nil, context.Background(), r, name, extra)
	require.NotEmpty(t, b)
	require.Equal(t, byte(recordTag), b[0])
	fs, err := parseEntry(b[1:])
	require.NoError(t, err, "%q", b)
	return b[1:], fs
}

func record(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

func TestAppendRecordBytes(t *testing.T) {
	enc := newEncoder("app", false, "", nil)
	b, _ := encodeEntry(t, enc, record(slog.LevelInfo, "hello", slog.Int("user.id", 7), slog.Bool("ok", true)), "")
	assert.Equal(t, "PRIORITY=6\nMESSAGE=hello\nSYSLOG_IDENTIFIER=app\nUSER_ID=7\nOK=true\n", string(b))
}

func TestAppendRecordBinaryForm(t *testing.T) {
	enc := newEncoder("app", false, "", nil)
	b, fs := encodeEntry(t, enc, record(slog.LevelWarn, "two\nlines", slog.String("k", "a\nb\n")), "")
	want := "PRIORITY=4\n" +
		"MESSAGE\n" + "\x09\x00\x00\x00\x00\x00\x00\x00" + "two\nlines" + "\n" +
		"SYSLOG_IDENTIFIER=app\n" +
		"K\n" + "\x04\x00\x00\x00\x00\x00\x00\x00" + "a\nb\n" + "\n"
	assert.Equal(t, want, string(b))
	assert.Equal(t, []field{
		{Name: "PRIORITY", Value: "4"},
		{Name: "MESSAGE", Value: "two\nlines", Binary: true},
		{Name: "SYSLOG_IDENTIFIER", Value: "app"},
		{Name: "K", Value: "a\nb\n", Binary: true},
	}, fs)
}

func TestPriority(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  byte
	}{
		{-100, 7},
		{asyncbus.LevelTrace, 7},
		{slog.LevelDebug, 7},
		{slog.LevelInfo - 1, 7},
		{slog.LevelInfo, 6},
		{slog.LevelInfo + 2, 6},
		{slog.LevelWarn, 4},
		{slog.LevelError - 1, 4},
		{slog.LevelError, 3},
		{asyncbus.LevelFatal - 1, 3},
		{asyncbus.LevelFatal, 2},
		{100, 2},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, priority(tc.level))
			_, fs := encodeEntry(t, newEncoder("x", false, "", nil), record(tc.level, "m"), "")
			assert.Equal(t, []string{strconv.Itoa(int(tc.want))}, get(fs, "PRIORITY"))
		})
	}
}

type textErr struct{}

func (textErr) Error() string { return "went wrong" }

type panicStringer struct{}

func (panicStringer) String() string { panic("boom") }

func TestAppendValue(t *testing.T) {
	ts := time.Date(2026, 12, 1, 10, 20, 30, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		v    slog.Value
		want string
	}{
		{"string", slog.StringValue("plain"), "plain"},
		{"invalid utf-8 kept", slog.StringValue("a\xffb"), "a\xffb"},
		{"int", slog.IntValue(-42), "-42"},
		{"uint", slog.Uint64Value(1<<63 + 1), "9223372036854775809"},
		{"float", slog.Float64Value(1.5), "1.5"},
		{"bool", slog.BoolValue(false), "false"},
		{"duration", slog.DurationValue(1500 * time.Millisecond), "1.5s"},
		{"time", slog.TimeValue(ts), "2026-12-01T10:20:30.123456789Z"},
		{"bytes", slog.AnyValue([]byte("raw\x00bytes")), "raw\x00bytes"},
		{"error", slog.AnyValue(textErr{}), "went wrong"},
		{"nil", slog.AnyValue(nil), "<nil>"},
		{"struct", slog.AnyValue(struct{ A int }{3}), "{A:3}"},
		{"panicking method", slog.AnyValue(panicStringer{}), "%!v(PANIC=String method: boom)"},
		{"log valuer", slog.AnyValue(slog.LogValuer(valuer{})), "resolved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fs := encodeEntry(t, newEncoder("x", false, "", nil), record(slog.LevelInfo, "m", slog.Any("v", tc.v)), "")
			assert.Equal(t, []string{tc.want}, get(fs, "V"))
		})
	}
}

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved") }

func TestGroupsFlatten(t *testing.T) {
	var enc asyncbus.Encoder = newEncoder("x", false, "", nil)
	enc = enc.WithAttrs([]slog.Attr{slog.String("top", "1")})
	enc = enc.WithGroup("http")
	enc = enc.WithAttrs([]slog.Attr{slog.String("method", "GET")})
	enc = enc.WithGroup("req.v2")
	b, fs := encodeEntry(t, enc, record(slog.LevelInfo, "m",
		slog.Int("status", 200),
		slog.Group("user", slog.String("id", "u1"), slog.Group("empty")),
		slog.Group("", slog.String("inlined", "y")),
		slog.Group("nothing"),
		slog.Attr{}, // the empty Attr is dropped
	), "")
	assert.Equal(t, "PRIORITY=6\nMESSAGE=m\nSYSLOG_IDENTIFIER=x\n"+
		"TOP=1\nHTTP_METHOD=GET\nHTTP_REQ_V2_STATUS=200\nHTTP_REQ_V2_USER_ID=u1\nHTTP_REQ_V2_INLINED=y\n", string(b))
	assert.Len(t, fs, 8)
}

func TestLoggerNameAndExtraAreTopLevel(t *testing.T) {
	enc := newEncoder("x", false, "", nil).WithGroup("g")
	_, fs := encodeEntry(t, enc, record(slog.LevelInfo, "m", slog.Int("a", 1)), "db.pool", slog.String("trace_id", "abc"))
	assert.Equal(t, []string{"db.pool"}, get(fs, "LOGGER"))
	assert.Equal(t, []string{"abc"}, get(fs, "TRACE_ID"))
	assert.Equal(t, []string{"1"}, get(fs, "G_A"))

	_, fs = encodeEntry(t, newEncoder("x", false, "component", nil), record(slog.LevelInfo, "m"), "db")
	assert.Equal(t, []string{"db"}, get(fs, "COMPONENT"))
}

func TestCollisions(t *testing.T) {
	_, fs := encodeEntry(t, newEncoder("x", false, "", nil), record(slog.LevelError, "real",
		slog.String("msg", "kept"), slog.String("message", "renamed"), slog.String("priority", "9"),
		slog.String("a-b", "1"), slog.String("a.b", "2"), // both map to A_B: two values of one field
	), "")
	assert.Equal(t, []string{"real"}, get(fs, "MESSAGE"))
	assert.Equal(t, []string{"3"}, get(fs, "PRIORITY"))
	assert.Equal(t, []string{"renamed"}, get(fs, "ATTR_MESSAGE"))
	assert.Equal(t, []string{"9"}, get(fs, "ATTR_PRIORITY"))
	assert.Equal(t, []string{"kept"}, get(fs, "MSG"))
	assert.Equal(t, []string{"1", "2"}, get(fs, "A_B"))
}

func TestReplaceAttr(t *testing.T) {
	var seen []string
	replace := func(groups []string, a slog.Attr) slog.Attr {
		seen = append(seen, strings.Join(append(append([]string(nil), groups...), a.Key), "."))
		switch a.Key {
		case "password":
			return slog.String(a.Key, "***")
		case "drop":
			return slog.Attr{}
		}
		return a
	}
	enc := newEncoder("x", false, "", replace).WithGroup("req")
	_, fs := encodeEntry(t, enc, record(slog.LevelInfo, "m",
		slog.String("password", "hunter2"), slog.Int("drop", 1), slog.Group("u", slog.String("name", "ann"))), "")
	assert.Equal(t, []string{"***"}, get(fs, "REQ_PASSWORD"))
	assert.Empty(t, get(fs, "REQ_DROP"))
	assert.Equal(t, []string{"ann"}, get(fs, "REQ_U_NAME"))
	assert.Equal(t, []string{"req.password", "req.drop", "req.u.name"}, seen)
}

func TestSourceFields(t *testing.T) {
	var pcs [1]uintptr
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0)
	r.PC = callerPC(pcs[:])
	_, fs := encodeEntry(t, newEncoder("x", true, "", nil), r, "")
	require.Len(t, get(fs, "CODE_FILE"), 1)
	assert.True(t, strings.HasSuffix(get(fs, "CODE_FILE")[0], "journald/encode_test.go"), get(fs, "CODE_FILE"))
	assert.Equal(t, []string{"github.com/asyncbus/asyncbus/journald.callerPC"}, get(fs, "CODE_FUNC"))
	require.Len(t, get(fs, "CODE_LINE"), 1)
	_, err := strconv.Atoi(get(fs, "CODE_LINE")[0])
	assert.NoError(t, err)
	// Cached: the same bytes again.
	_, again := encodeEntry(t, newEncoder("x", true, "", nil), r, "")
	assert.Equal(t, fs, again)
	// Without AddSource, or without a PC, none.
	_, fs = encodeEntry(t, newEncoder("x", false, "", nil), r, "")
	assert.Empty(t, get(fs, "CODE_FILE"))
	_, fs = encodeEntry(t, newEncoder("x", true, "", nil), record(slog.LevelInfo, "m"), "")
	assert.Empty(t, get(fs, "CODE_FILE"))
}

func TestIdentifierWithNewline(t *testing.T) {
	_, fs := encodeEntry(t, newEncoder("a\nb", false, "", nil), record(slog.LevelInfo, "m"), "")
	assert.Equal(t, []field{{Name: "PRIORITY", Value: "6"}, {Name: "MESSAGE", Value: "m"}, {Name: "SYSLOG_IDENTIFIER", Value: "a\nb", Binary: true}}, fs)
}

var errSentinel = errors.New("x")

func TestWrappedError(t *testing.T) {
	_, fs := encodeEntry(t, newEncoder("x", false, "", nil), record(slog.LevelInfo, "m", slog.Any("err", errors.Join(errSentinel, errors.New("y")))), "")
	assert.Equal(t, []string{"x\ny"}, get(fs, "ERR"))
}

// callerPC returns its own PC, a known function for the CODE_* fields.
func callerPC(pcs []uintptr) uintptr {
	runtime.Callers(1, pcs)
	return pcs[0]
}

func TestAppendRecordAllocatesNothing(t *testing.T) {
	enc := newEncoder("app", true, "", nil).WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request served", callerPC(make([]uintptr, 1)))
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200),
		slog.Duration("took", time.Millisecond), slog.Bool("cached", false), slog.Any("err", errSentinel),
		slog.Group("user", slog.String("id", "u1"), slog.Float64("score", 0.5)))
	extra := []slog.Attr{slog.String("trace_id", "0102")}
	buf := enc.AppendRecord(nil, context.Background(), r, "api", extra) // warms the source cache
	allocs := testing.AllocsPerRun(100, func() {
		buf = enc.AppendRecord(buf[:0], context.Background(), r, "api", extra)
	})
	assert.Zero(t, allocs)
	_, err := parseEntry(buf[1:])
	require.NoError(t, err)
}

func BenchmarkAppendRecord(b *testing.B) {
	enc := newEncoder("app", false, "", nil)
	r := record(slog.LevelInfo, "request handled", slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"), slog.Int("status", 200),
		slog.Duration("latency", 1500*time.Microsecond), slog.Int64("bytes", 5120), slog.Bool("cache_hit", true))
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = enc.AppendRecord(buf[:0], context.Background(), r, "", nil)
	}
}
