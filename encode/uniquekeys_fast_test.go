package encode

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickUniqueJSON pins what the flat pass proves, and checks on every
// line that a proof agrees with the full scan (no repeat, valid JSON).
func TestQuickUniqueJSON(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	var many strings.Builder
	many.WriteString("{")
	for i := range quickKeys + 1 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	manyKeys := strings.TrimSuffix(many.String(), ",") + "}"
	tests := []struct {
		line string
		want bool
	}{
		{`{}`, true},
		{`{"a":1,"b":{"a":2},"c":[],"d":{}}`, true},
		{`{"a":[{"b":1},{"b":2}],"c":[1,"x",true,null]}`, true},
		{`{"a":"x\"y","b":"\\","c":"` + strings.Repeat("long ", 9) + `\"q"}`, true},
		{`{"axb":1,"ayb":2}`, true}, // one filter bit, different keys
		{`{"":1,"a":2}`, true},
		{deep(quickDepth), true},
		{`{"a":1,"a":2}`, false},
		{`{"":1,"":2}`, false},
		{`{"a":{"b":1,"b":2}}`, false},
		{`{"a":[{"b":1,"b":2}]}`, false},
		{`{"a\"":1}`, false}, // an escaped key: the full scan decodes it
		{`{"a": 1}`, false},  // spaces: not this package's compact JSON
		{`{"a":1`, false},    // not closed
		{`{"a":1,}`, false},  // not JSON
		{`{"a":[1}`, false},  // mismatched brackets
		{`{"a":"x}`, false},  // unterminated string
		{`{"a":}`, false},    // no value
		{`{"a"1}`, false},    // no ':'
		{deep(quickDepth + 1), false},
		{manyKeys, false}, // more keys than remembered
	}
	for _, tt := range tests {
		b := []byte(tt.line)
		got := quickUniqueJSON(b, 0, len(b))
		assert.Equal(t, tt.want, got, tt.line)
		if got {
			dup := false
			assert.Positive(t, scanJSON(b, 0, len(b), &dup, 0), tt.line)
			assert.False(t, dup, tt.line)
		}
	}
}

// TestUniqueTemplateProves checks which records the fast path's keys and
// the template prove free of repeats, and that the line of every record
// they prove is one the full scan leaves as it is.
func TestUniqueTemplateProves(t *testing.T) {
	base := func(f Format) *Encoder { return New(Options{Format: f, AddSource: true, UniqueKeys: true}) }
	derived := func(f Format) *Encoder {
		return base(f).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).
			WithGroup("req").WithAttrs([]slog.Attr{slog.Int("id", 7)})
	}
	grouped := func(f Format) *Encoder { return base(f).WithGroup("req") }
	str := func(k string) slog.Attr { return slog.String(k, "v") }
	var sixteen []slog.Attr
	for i := range maxRecordKeys + 1 {
		sixteen = append(sixteen, slog.Int(fmt.Sprintf("k%d", i), i))
	}
	tests := []struct {
		name  string
		f     Format
		enc   func(Format) *Encoder
		attrs []slog.Attr
		extra []slog.Attr
		want  bool
	}{
		{"scalars", JSON, derived, []slog.Attr{str("a"), slog.Int("b", 1), slog.Bool("c", true), slog.Duration("d", time.Second)}, nil, true},
		{"record repeats itself", JSON, derived, []slog.Attr{str("a"), str("a")}, nil, false},
		{"record repeats the state's group", JSON, derived, []slog.Attr{str("id")}, nil, false},
		{"state key in another object", JSON, derived, []slog.Attr{str("svc"), str("msg")}, nil, true},
		{"record repeats a built-in", JSON, base, []slog.Attr{str("msg")}, nil, false},
		{"record repeats the source", JSON, base, []slog.Attr{str("source")}, nil, false},
		{"record repeats the time", JSON, base, []slog.Attr{str("time")}, nil, false},
		{"record repeats the logger", JSON, func(f Format) *Encoder { return base(f).Named("n") }, []slog.Attr{str("logger")}, nil, false},
		{"extra repeats a built-in", JSON, grouped, nil, []slog.Attr{str("level")}, false},
		{"extra repeats extra", JSON, grouped, nil, []slog.Attr{str("trace_id"), str("trace_id")}, false},
		{"extra and record in different objects", JSON, grouped, []slog.Attr{str("trace_id")}, []slog.Attr{str("trace_id")}, true},
		{"extra and record in one object", JSON, base, []slog.Attr{str("trace_id")}, []slog.Attr{str("trace_id")}, false},
		{"group value", JSON, base, []slog.Attr{slog.Group("g", str("a"))}, nil, false},
		{"any value", JSON, base, []slog.Attr{slog.Any("a", []int{1})}, nil, false},
		{"escaped key", JSON, base, []slog.Attr{str(`q"k`)}, nil, false},
		{"invalid UTF-8 keys", JSON, base, []slog.Attr{str("\xff"), str("\xfe")}, nil, false}, // both written as \ufffd
		{"valid UTF-8 keys", JSON, base, []slog.Attr{str("é"), str("è")}, nil, true},
		{"empty keys", JSON, base, []slog.Attr{str(""), str("")}, nil, false},
		{"an empty key", JSON, base, []slog.Attr{str(""), str("a")}, nil, true},
		{"too many keys", JSON, base, sixteen, nil, false},
		{"preset built-in", ECSJSON, base, []slog.Attr{str("log.level")}, nil, false},
		{"preset fixed field", ECSJSON, base, []slog.Attr{str("ecs.version")}, nil, false},
		{"preset source", GCPJSON, base, []slog.Attr{str("logging.googleapis.com/sourceLocation")}, nil, false},
		{"preset scalars", DatadogJSON, derived, []slog.Attr{str("status"), str("a")}, nil, true},
	}
	for _, tt := range tests {
		e := tt.enc(tt.f)
		require.NotNil(t, e.uniq, tt.name)
		r := record(fixedTime, slog.LevelInfo, "m", callerPC(), tt.attrs)
		line, proven := provenLine(e, &r, tt.extra)
		assert.Equal(t, tt.want, proven, tt.name)
		off := *e
		off.fast = off.inner
		require.Equal(t, string(off.Append(nil, r, tt.extra)), string(line), "the fast path's line, %s", tt.name)
		if proven {
			assert.Equal(t, string(line), string(uniqueJSON(bytes.Clone(line), 0, len(line)-1, false)), tt.name)
		}
	}
}

// provenLine is the fast path's line of r and extra, and whether the keys
// it noted prove it free of repeats.
func provenLine(e *Encoder, r *slog.Record, extra []slog.Attr) ([]byte, bool) {
	keys := newRecordKeys(e.uniq)
	if e.inner == fastPresetJSON {
		return e.appendPresetJSON(nil, r, extra, &keys), keys.proven()
	}
	return e.appendJSON(nil, r, extra, &keys), keys.proven()
}

// TestUniqueTemplateNone: a fixed part that does not scan (a repeat in the
// state) has no template, and its lines are still made unique.
func TestUniqueTemplateNone(t *testing.T) {
	e := New(Options{UniqueKeys: true}).WithAttrs([]slog.Attr{slog.Int("a", 1), slog.Int("a", 2)})
	assert.Nil(t, e.uniq)
	line := e.Append(nil, record(time.Time{}, slog.LevelInfo, "m", 0, nil), nil)
	assert.Equal(t, `{"level":"INFO","msg":"m","a":2}`+"\n", string(line))
	assert.Nil(t, New(Options{Format: Text, UniqueKeys: true}).uniq, "JSON only")
}

// TestRecordKeysRepeat: a repeat among the noted keys marks the line for
// the rewrite, which keeps the key at its first position, last value.
func TestRecordKeysRepeat(t *testing.T) {
	e := New(Options{UniqueKeys: true}).WithGroup("req")
	r := record(time.Time{}, slog.LevelInfo, "m", 0, []slog.Attr{slog.Int("a", 1), slog.Int("b", 2), slog.Int("a", 3)})
	keys := newRecordKeys(e.uniq)
	e.appendJSON(nil, &r, nil, &keys)
	assert.True(t, keys.repeat)
	assert.False(t, keys.proven())
	assert.Equal(t, `{"level":"INFO","msg":"m","req":{"a":3,"b":2}}`+"\n", string(e.Append(nil, r, nil)))
}
