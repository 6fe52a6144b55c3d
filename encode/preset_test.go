package encode

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// presetSource is the source position the golden lines carry.
var presetSource = &slog.Source{Function: "example.com/app.handle", File: "/src/app/handler.go", Line: 42}

// presetLine encodes one Warn record with source, a logger name, state and
// a record attribute in format f, through the general path (a ReplaceAttr
// sets the golden source, then applies rep if not nil).
func presetLine(t *testing.T, f Format, rep func([]string, slog.Attr) slog.Attr) string {
	t.Helper()
	srcRep := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.SourceKey && len(groups) == 0 {
			a.Value = slog.AnyValue(presetSource) // a fixed source for the golden lines
		}
		if rep != nil {
			a = rep(groups, a)
		}
		return a
	}
	e := New(Options{Format: f, AddSource: true, ReplaceAttr: srcRep}).
		Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
	r := record(fixedTime, slog.LevelWarn, "request failed", callerPC(), []slog.Attr{slog.Int("status", 503)})
	return string(e.Append(nil, r, nil))
}

// TestPresetGolden pins each preset's line to the field names the platform
// documents:
//   - Google Cloud Logging, "Special JSON fields in messages":
//     https://cloud.google.com/logging/docs/structured-logging (severity,
//     message, time, logging.googleapis.com/sourceLocation with file, line and
//     function; LogEntrySourceLocation.line is an int64, a string in JSON:
//     https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry);
//   - Elastic, the ecs-logging specification and the ECS log fields:
//     https://github.com/elastic/ecs-logging/blob/main/spec/spec.json
//     (@timestamp, log.level, message, ecs.version as dotted top-level keys)
//     and https://www.elastic.co/guide/en/ecs/current/ecs-log.html
//     (log.logger, log.origin.file.name, log.origin.file.line, log.origin.function);
//   - Datadog, reserved and standard attributes:
//     https://docs.datadoghq.com/logs/log_configuration/attributes_naming_convention/
//     (timestamp, status, message, logger.name, logger.method_name).
func TestPresetGolden(t *testing.T) {
	tests := []struct {
		f    Format
		want string
	}{
		{GCPJSON, `{"time":"2024-05-17T10:30:45.123456789Z","severity":"WARNING","message":"request failed",` +
			`"logging.googleapis.com/sourceLocation":{"file":"/src/app/handler.go","line":"42","function":"example.com/app.handle"},` +
			`"logger":"http","svc":"api","req":{"status":503}}` + "\n"},
		{ECSJSON, `{"@timestamp":"2024-05-17T10:30:45.123456789Z","log.level":"warn","message":"request failed","ecs.version":"1.6.0",` +
			`"log.origin.file.name":"/src/app/handler.go","log.origin.file.line":42,"log.origin.function":"example.com/app.handle",` +
			`"log.logger":"http","svc":"api","req":{"status":503}}` + "\n"},
		{DatadogJSON, `{"timestamp":"2024-05-17T10:30:45.123456789Z","status":"warn","message":"request failed",` +
			`"logger.method_name":"example.com/app.handle","caller":"/src/app/handler.go:42",` +
			`"logger.name":"http","svc":"api","req":{"status":503}}` + "\n"},
	}
	for _, tt := range tests {
		got := presetLine(t, tt.f, nil)
		assert.Equal(t, tt.want, got, "general path, format %d", tt.f)
		assert.Equal(t, tt.want, presetLineFast(t, tt.f), "fast path, format %d", tt.f)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(got), &m))
	}
}

// TestPresetFastPathMatchesGeneral compares the presets' fast path with the
// general code, with and without source, on records with and without time
// and at tabled and untabled levels.
func TestPresetFastPathMatchesGeneral(t *testing.T) {
	for _, f := range []Format{GCPJSON, ECSJSON, DatadogJSON} {
		for _, addSource := range []bool{false, true} {
			for _, l := range []slog.Level{LevelTrace, -1, 0, 2, 4, 8, 11, 12, 16, 100, -100} {
				for _, at := range []time.Time{fixedTime, {}} {
					e := New(Options{Format: f, AddSource: addSource}).WithGroup("g")
					r := record(at, l, "m", callerPC(), []slog.Attr{slog.Bool("ok", true)})
					fast := string(e.Append(nil, r, nil))
					requireSame(t, string(generalPath(e).Append(nil, r, nil)), fast, "")
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(fast), &m), fast)
				}
			}
		}
	}
}

// presetLineFast is presetLine's record through the fast path, without
// source (the fast path's would be this test's), with the golden source
// inserted where the preset writes it.
func presetLineFast(t *testing.T, f Format) string {
	t.Helper()
	e := New(Options{Format: f}).Named("http").WithAttrs([]slog.Attr{slog.String("svc", "api")}).WithGroup("req")
	r := record(fixedTime, slog.LevelWarn, "request failed", 0, []slog.Attr{slog.Int("status", 503)})
	line := string(e.Append(nil, r, nil))
	p := presetOf(f)
	i := strings.Index(line, p.msgTok+`"request failed"`) + len(p.msgTok+`"request failed"`) + len(p.fixed)
	return line[:i] + string(p.source(nil, presetSource)) + line[i:]
}

func TestGCPSeverity(t *testing.T) {
	tests := []struct {
		l    slog.Level
		want string
	}{
		{LevelTrace, "DEBUG"}, {slog.LevelDebug, "DEBUG"}, {-1, "DEBUG"},
		{slog.LevelInfo, "INFO"}, {slog.LevelInfo + 2, "INFO"},
		{slog.LevelWarn, "WARNING"}, {slog.LevelError - 1, "WARNING"},
		{slog.LevelError, "ERROR"}, {LevelFatal - 1, "ERROR"},
		{LevelFatal, "CRITICAL"}, {LevelFatal + 100, "CRITICAL"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, gcpSeverity(tt.l), "level %d", tt.l)
	}
}

// TestPresetReplaceAttr checks that ReplaceAttr sees the built-ins under
// slog's keys and that its results are written under the preset's keys,
// in the preset's spellings, or as they are when renamed or retyped.
func TestPresetReplaceAttr(t *testing.T) {
	var seen []string
	rep := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 {
			seen = append(seen, a.Key)
		}
		switch a.Key {
		case slog.TimeKey:
			return slog.Attr{} // removed
		case slog.LevelKey:
			return slog.Any(slog.LevelKey, slog.LevelError) // a Level: the preset's spelling
		case slog.MessageKey:
			a.Key = "msg2" // renamed: written as it is
		}
		return a
	}
	got := presetLine(t, GCPJSON, rep)
	assert.Equal(t, []string{"logger", "svc", slog.TimeKey, slog.LevelKey, slog.MessageKey, slog.SourceKey}, seen)
	assert.Equal(t, `{"severity":"ERROR","msg2":"request failed",`+
		`"logging.googleapis.com/sourceLocation":{"file":"/src/app/handler.go","line":"42","function":"example.com/app.handle"},`+
		`"logger":"http","svc":"api","req":{"status":503}}`+"\n", got)

	// Everything before the fixed fields removed: no stray ','.
	drop := func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey, slog.LevelKey, slog.MessageKey:
			return slog.Attr{}
		}
		return a
	}
	got = presetLine(t, ECSJSON, drop)
	assert.True(t, strings.HasPrefix(got, `{"ecs.version":"1.6.0","log.origin.file.name":`), got)
	got = presetLine(t, DatadogJSON, drop)
	assert.True(t, strings.HasPrefix(got, `{"logger.method_name":`), got)
}

// TestPresetLoggerKey checks the preset's default logger key and that an
// explicit Options.LoggerKey wins.
func TestPresetLoggerKey(t *testing.T) {
	r := record(time.Time{}, slog.LevelInfo, "m", 0, nil)
	got := string(New(Options{Format: DatadogJSON, LoggerKey: "name"}).Named("x").Append(nil, r, nil))
	assert.Equal(t, `{"status":"info","message":"m","name":"x"}`+"\n", got)
	got = string(New(Options{Format: ECSJSON}).Named("x").Append(nil, r, nil))
	assert.Equal(t, `{"log.level":"info","message":"m","ecs.version":"1.6.0","log.logger":"x"}`+"\n", got)
}

func TestPresetDropMarker(t *testing.T) {
	got := string(New(Options{Format: GCPJSON}).AppendDropMarker(nil, fixedTime, 3))
	assert.Equal(t, `{"time":"2024-05-17T10:30:45.123456789Z","severity":"WARNING","message":"asyncbus: records dropped","dropped":3}`+"\n", got)
}

func TestPresetValid(t *testing.T) {
	for _, f := range []Format{GCPJSON, ECSJSON, DatadogJSON} {
		assert.True(t, f.Valid(), "format %d", f)
		assert.Equal(t, f, f.WithZapTime(ZapTimeEpoch), "format %d", f)
	}
	assert.False(t, (DatadogJSON + 1).Valid())
	assert.False(t, (GCPJSON - 1).Valid())
}

// ecsValueErr is an error of a named non-pointer type.
type ecsValueErr struct{}

func (ecsValueErr) Error() string { return "value error" }

// ecsStackErr carries a stack, as github.com/go-errors/errors does.
type ecsStackErr struct{ pcs []uintptr }

func (e ecsStackErr) Error() string      { return "with stack" }
func (e ecsStackErr) Callers() []uintptr { return e.pcs }

// ecsJSONErr is an error that marshals itself.
type ecsJSONErr struct{}

func (ecsJSONErr) Error() string                { return "json error" }
func (ecsJSONErr) MarshalJSON() ([]byte, error) { return []byte(`{"code":7}`), nil }

// ecsPanicErr's Error panics.
type ecsPanicErr struct{}

func (ecsPanicErr) Error() string { panic("bad error") }

// TestECSErrorObject: under ECSJSON an error value is ECS's error object
// ({"message", "type", and "stack_trace" only when the error carries a
// stack}), under its own key, at any depth and in the WithAttrs state, on
// the fast and the general path; the other formats keep the string.
func TestECSErrorObject(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		attrs []slog.Attr
		want  string // the line after the built-in fields
	}{
		{"error key", []slog.Attr{slog.Any("error", boom)}, `"error":{"message":"boom","type":"*errors.errorString"}`},
		{"err key", []slog.Attr{slog.Any("err", boom)}, `"err":{"message":"boom","type":"*errors.errorString"}`},
		{"wrapped", []slog.Attr{slog.Any("error", fmt.Errorf("charge: %w", boom))}, `"error":{"message":"charge: boom","type":"*fmt.wrapError"}`},
		{"value type", []slog.Attr{slog.Any("error", ecsValueErr{})}, `"error":{"message":"value error","type":"encode.ecsValueErr"}`},
		{"in a group", []slog.Attr{slog.Group("req", slog.Any("error", boom))}, `"req":{"error":{"message":"boom","type":"*errors.errorString"}}`},
		{"marshaler", []slog.Attr{slog.Any("error", ecsJSONErr{})}, `"error":{"code":7}`},
		{"panicking", []slog.Attr{slog.Any("error", ecsPanicErr{})}, `"error":"!PANIC: bad error"`},
		{"string", []slog.Attr{slog.String("error", "boom")}, `"error":"boom"`},
	}
	head := `{"@timestamp":"2024-05-17T10:30:45.123456789Z","log.level":"error","message":"m","ecs.version":"1.6.0",`
	for _, tt := range tests {
		r := record(fixedTime, slog.LevelError, "m", 0, tt.attrs)
		e := New(Options{Format: ECSJSON})
		got := string(e.Append(nil, r, nil))
		assert.Equal(t, head+tt.want+"}\n", got, tt.name)
		assert.Equal(t, got, string(generalPath(e).Append(nil, r, nil)), "general path: %s", tt.name)
		assert.True(t, json.Valid([]byte(got)), got)
	}

	// The WithAttrs state, and the formats that keep the string.
	r := record(time.Time{}, slog.LevelError, "m", 0, nil)
	got := string(New(Options{Format: ECSJSON}).WithAttrs([]slog.Attr{slog.Any("error", boom)}).Append(nil, r, nil))
	assert.Equal(t, `{"log.level":"error","message":"m","ecs.version":"1.6.0","error":{"message":"boom","type":"*errors.errorString"}}`+"\n", got)
	for _, f := range []Format{JSON, GCPJSON, DatadogJSON} {
		got := string(New(Options{Format: f}).Append(nil, record(time.Time{}, slog.LevelError, "m", 0, []slog.Attr{slog.Any("error", boom)}), nil))
		assert.Contains(t, got, `"error":"boom"`, "format %d", f)
	}
}

// TestECSErrorStackTrace: an error whose chain carries a stack writes it as
// error.stack_trace, one "function\n\tfile:line" entry per frame.
func TestECSErrorStackTrace(t *testing.T) {
	var pcs [8]uintptr
	n := runtime.Callers(1, pcs[:])
	err := fmt.Errorf("outer: %w", ecsStackErr{pcs[:n]})
	r := record(time.Time{}, slog.LevelError, "m", 0, []slog.Attr{slog.Any("error", err)})
	line := New(Options{Format: ECSJSON}).Append(nil, r, nil)
	var m struct {
		Error map[string]string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(line, &m), string(line))
	assert.Equal(t, "outer: with stack", m.Error["message"])
	assert.Equal(t, "*fmt.wrapError", m.Error["type"])
	st := m.Error["stack_trace"]
	assert.True(t, strings.HasPrefix(st, "github.com/asyncbus/asyncbus/encode.TestECSErrorStackTrace\n\t"), st)
	assert.Contains(t, st, "preset_test.go:")
}
