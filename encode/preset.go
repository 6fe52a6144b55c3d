package encode

// Cloud field presets: the JSON format with the keys and level names that
// Google Cloud Logging, Elastic (ECS) and Datadog read from a log line.

import (
	"log/slog"
	"reflect"
	"strconv"

	"github.com/asyncbus/asyncbus/internal/stack"
)

// The cloud presets are the JSON format (values, groups, WithAttrs,
// WithGroup, ReplaceAttr and the limits as in JSON) with the built-in
// fields under the keys and in the spellings a log platform reads, written
// straight by the encoder at no cost over JSON (no ReplaceAttr involved).
// The built-ins are written in the order time, level, message, then the
// preset's fixed fields, then the source; a zero record time is left out,
// as in JSON. ReplaceAttr, when set, sees the built-ins under slog's keys
// (time, level, msg, source) and values, as in JSON; a result still under
// slog's key is written under the preset's key, a slog.Level result in the
// preset's spelling and a *slog.Source result in the preset's form.
// Options.LoggerKey defaults to the preset's logger key.
//
// Trace correlation fields come from the record's context: pair a preset
// with otelbridge.TraceContext in the matching style (StyleGoogleCloud,
// StyleECS, StyleDatadog).
const (
	// GCPJSON is Google Cloud Logging's structured logging
	// (https://cloud.google.com/logging/docs/structured-logging): time
	// (RFC 3339), severity (a LogSeverity name: Trace and Debug are DEBUG,
	// Info INFO, Warn WARNING, Error ERROR, Fatal and above CRITICAL; a
	// level in between takes the name below it), message,
	// logging.googleapis.com/sourceLocation {file, line (a string, as
	// proto3 JSON writes an int64), function}, and the logger name under
	// "logger".
	GCPJSON Format = 0x20 + iota
	// ECSJSON is Elastic Common Schema logging
	// (https://www.elastic.co/guide/en/ecs-logging/overview/current/intro.html):
	// @timestamp, log.level (lower case: trace, debug, info, warn, error,
	// fatal, or "info+2"), message, ecs.version "1.6.0" (the version
	// Elastic's Go loggers ecszap, ecslogrus and ecszerolog write),
	// log.origin.file.name, log.origin.file.line and log.origin.function,
	// and the logger name under log.logger. The dotted keys are written as
	// they are named, not nested, as the ecs-logging libraries write them.
	// An error value, under any key and in any group, is written as ECS's
	// error object, nested as ecszap writes it: {"message": its Error(), "type":
	// its Go type (%T), "stack_trace": the stack its chain carries, if any
	// (a github.com/pkg/errors-style StackTrace or go-errors-style Callers
	// method; "function\n\tfile:line" per frame, as zap writes stacks)};
	// no stack is made up for an error that carries none. An error that is a
	// json.Marshaler is marshaled as in JSON. Log it under the key "error"
	// for Elastic to read it as the event's error.
	ECSJSON
	// DatadogJSON is Datadog's reserved and standard attributes
	// (https://docs.datadoghq.com/logs/log_configuration/attributes_naming_convention/):
	// timestamp, status (lower case, as in ECSJSON; Datadog's status
	// remapper reads "fatal" as emergency), message, the logger name under
	// logger.name, and the source as logger.method_name (the function) and
	// caller ("file:line"; Datadog has no standard attribute for it, and
	// "source" is reserved for the integration name).
	DatadogJSON
)

// ecsVersion is the ecs.version written by ECSJSON: the one Elastic's Go
// loggers write (ecszap since 0.3.0, ecslogrus, ecszerolog).
const ecsVersion = "1.6.0"

// preset holds the pre-encoded keys of a cloud preset.
type preset struct {
	timeTok  string // `"time":`
	levelKey string // the level key, unquoted
	msgTok   string // `,"message":`
	fixed    string // constant fields after the message, each after a ','
	logger   string // the default Options.LoggerKey
	gcp      bool   // level names are GCP LogSeverity names, else lower case
	ecsError bool   // error values are written as ECS error objects
	// source appends the source fields, each after a ','.
	source func(b []byte, src *slog.Source) []byte
}

// presets is indexed by Format - GCPJSON.
var presets = [...]preset{
	0: {
		timeTok: `"time":`, levelKey: "severity", msgTok: `,"message":`,
		logger: "logger", gcp: true, source: appendGCPSource,
	},
	ECSJSON - GCPJSON: {
		timeTok: `"@timestamp":`, levelKey: "log.level", msgTok: `,"message":`,
		fixed: `,"ecs.version":"` + ecsVersion + `"`, logger: "log.logger", source: appendECSSource,
		ecsError: true,
	},
	DatadogJSON - GCPJSON: {
		timeTok: `"timestamp":`, levelKey: "status", msgTok: `,"message":`,
		logger: "logger.name", source: appendDatadogSource,
	},
}

// isPreset reports whether f is one of the cloud presets.
func (f Format) isPreset() bool { return f >= GCPJSON && f <= DatadogJSON }

// presetOf returns the preset of f, or nil if f is not a preset.
func presetOf(f Format) *preset {
	if !f.isPreset() {
		return nil
	}
	return &presets[f-GCPJSON]
}

// gcpSeverity returns the LogSeverity name of l.
func gcpSeverity(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARNING"
	case l < LevelFatal:
		return "ERROR"
	default:
		return "CRITICAL"
	}
}

// appendPresetJSON is the fast path of the presets: appendJSON with the
// preset's built-in fields.
func (e *Encoder) appendPresetJSON(b []byte, r *slog.Record, extra []slog.Attr, keys *recordKeys) []byte {
	c := e.c
	p := c.preset
	bud := newBudget(len(b))
	b = append(b, '{')
	if !r.Time.IsZero() {
		b = append(b, p.timeTok...)
		b = appendJSONTime(b, r.Time)
		b = append(b, ',')
	}
	if l := r.Level; l >= levelTabMin && l <= levelTabMax {
		b = append(b, c.levelTok[l-levelTabMin]...)
	} else {
		b = appendJSONKey(b, p.levelKey, false)
		b = appendJSONString(b, c.levelName(l))
	}
	b = append(b, p.msgTok...)
	b = appendJSONString(b, r.Message)
	b = append(b, p.fixed...)
	if c.addSource {
		if src := sourceFor(r.PC); src != nil {
			b = p.source(b, &src.src)
		}
	}
	return e.appendJSONFields(b, r, extra, &bud, keys)
}

// presetHeader is header for the presets (the general path, used with
// ReplaceAttr): the built-ins go through ReplaceAttr under slog's keys
// and are written under the preset's.
func (s *state) presetHeader(r slog.Record) {
	c, p := s.c, s.c.preset
	s.buf = append(s.buf, '{')
	builtin := func(a slog.Attr, key string) slog.Attr {
		a = s.replace(a)
		if a.Key == key {
			a.Key = presetKey(p, key)
		}
		return a
	}
	if !r.Time.IsZero() {
		s.appendResolved(builtin(slog.Time(slog.TimeKey, r.Time.Round(0)), slog.TimeKey), 0)
	}
	a := builtin(slog.Any(slog.LevelKey, r.Level), slog.LevelKey)
	if a.Value.Kind() == slog.KindAny {
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(c.levelName(l))
		}
	}
	s.appendResolved(a, 0)
	s.appendResolved(builtin(slog.String(slog.MessageKey, r.Message), slog.MessageKey), 0)
	if p.fixed != "" {
		s.appendCommaFields(p.fixed)
	}
	if c.addSource {
		src := r.Source()
		if src == nil {
			src = &slog.Source{}
		}
		a := s.replace(slog.Any(slog.SourceKey, src))
		if a.Key == slog.SourceKey && a.Value.Kind() == slog.KindAny {
			if src, ok := a.Value.Any().(*slog.Source); ok {
				if src != nil && *src != (slog.Source{}) {
					s.appendCommaFields(string(p.source(nil, src)))
				}
				return
			}
		}
		s.appendResolved(a, 0)
	}
}

// appendCommaFields appends fields, JSON members each after a ',', as the
// next fields of the object (without the first ',' if they are its first).
func (s *state) appendCommaFields(fields string) {
	if s.sep == "" {
		fields = fields[1:]
	}
	s.buf = append(s.buf, fields...)
	s.sep = ","
}

// presetKey returns the preset's key for slog's built-in key.
func presetKey(p *preset, key string) string {
	switch key {
	case slog.TimeKey:
		return p.timeTok[1 : len(p.timeTok)-2]
	case slog.LevelKey:
		return p.levelKey
	default: // slog.MessageKey
		return p.msgTok[2 : len(p.msgTok)-2]
	}
}

// appendGCPSource appends logging.googleapis.com/sourceLocation, whose
// line is a string (LogEntrySourceLocation.line is an int64, which proto3
// JSON writes as a string).
func appendGCPSource(b []byte, src *slog.Source) []byte {
	b = append(b, `,"logging.googleapis.com/sourceLocation":{`...)
	comma := false
	if src.File != "" {
		b = appendJSONString(appendJSONKey(b, "file", comma), src.File)
		comma = true
	}
	if src.Line != 0 {
		b = appendJSONKey(b, "line", comma)
		b = append(strconv.AppendInt(append(b, '"'), int64(src.Line), 10), '"')
		comma = true
	}
	if src.Function != "" {
		b = appendJSONString(appendJSONKey(b, "function", comma), src.Function)
	}
	return append(b, '}')
}

// appendECSSource appends log.origin.file.name, log.origin.file.line and
// log.origin.function.
func appendECSSource(b []byte, src *slog.Source) []byte {
	if src.File != "" {
		b = appendJSONString(append(b, `,"log.origin.file.name":`...), src.File)
	}
	if src.Line != 0 {
		b = strconv.AppendInt(append(b, `,"log.origin.file.line":`...), int64(src.Line), 10)
	}
	if src.Function != "" {
		b = appendJSONString(append(b, `,"log.origin.function":`...), src.Function)
	}
	return b
}

// appendDatadogSource appends logger.method_name and caller ("file:line").
func appendDatadogSource(b []byte, src *slog.Source) []byte {
	if src.Function != "" {
		b = appendJSONString(append(b, `,"logger.method_name":`...), src.Function)
	}
	if src.File != "" || src.Line != 0 {
		// "file:line" as one JSON string: the file escaped, its closing
		// quote replaced by the line (digits need no escaping).
		b = appendJSONString(append(b, `,"caller":`...), src.File)
		b = append(strconv.AppendInt(append(b[:len(b)-1], ':'), int64(src.Line), 10), '"')
	}
	return b
}

// appendECSError appends err as ECS's error object: message, type (%T) and,
// when err's chain carries a stack, stack_trace. A panicking Error method
// panics here, before anything is written, for appendAny to report.
func (s *state) appendECSError(err error) {
	msg := err.Error()
	b := appendJSONString(append(s.buf, `{"message":`...), msg)
	b = appendJSONString(append(b, `,"type":`...), reflect.TypeOf(err).String())
	if pcs := stack.OfError(err); len(pcs) > 0 {
		b = appendJSONString(append(b, `,"stack_trace":`...), stack.Format(pcs))
	}
	s.buf = append(b, '}')
}
