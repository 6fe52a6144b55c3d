package logrbridge

import (
	"context"
	"log/slog"
	"reflect"
	"runtime"
	"time"
)

// zapDPanicLevel is the slog level of the lines that Zapr mode writes
// where zapr calls zap's DPanic: zap's DPanicLevel, one above Error.
const zapDPanicLevel = slog.LevelError + 1

// The messages and keys of zapr's DPanic lines for logr misuse.
const (
	zaprOddMsg       = "odd number of arguments passed as key-value pairs for logging"
	zaprOddKey       = "ignored key"
	zaprNonStringMsg = "non-string key argument passed to logging, ignoring all later arguments"
	zaprNonStringKey = "invalid key"
	zaprFieldMsg     = "strongly-typed Zap Field passed to logr"
	zaprFieldKey     = "zap field"
)

// zaprMisuse is the DPanic line zapr writes before a record whose
// key/value arguments it cuts short; msg is "" when there is none.
type zaprMisuse struct {
	msg  string
	attr slog.Attr
}

// zaprArgs returns the part of kv that zapr logs and the DPanic line it
// writes about the rest: at a zap.Field in a key's place, at a final key
// without a value, and at a key that is not a string, zapr stops.
func (c *config) zaprArgs(kv []any) ([]any, zaprMisuse) {
	for i := 0; i < len(kv); i += 2 {
		if _, ok := kv[i].(string); ok && i+1 < len(kv) {
			continue
		}
		var m zaprMisuse
		switch {
		case isZapField(kv[i]):
			m = zaprMisuse{zaprFieldMsg, c.attr(zaprFieldKey, kv[i])}
		case i == len(kv)-1:
			m = zaprMisuse{zaprOddMsg, c.attr(zaprOddKey, kv[i])}
		default:
			m = zaprMisuse{zaprNonStringMsg, c.attr(zaprNonStringKey, kv[i])}
		}
		return kv[:i], m
	}
	return kv, zaprMisuse{}
}

// isZapField reports whether k is a go.uber.org/zap Field (zapcore.Field),
// found by name: this module does not import zap.
func isZapField(k any) bool {
	t := reflect.TypeOf(k)
	return t != nil && t.Name() == "Field" && t.PkgPath() == "go.uber.org/zap/zapcore"
}

// writeMisuse writes m's DPanic line to h, as zap's DPanic does: when
// its level is enabled, with the logging call's pc, and with stack (the
// trace from the logging call) when the line is at or above the stack
// trace level. It never panics: zap's development mode does, but a log
// call must not take the program down (see the drop-in's package doc).
func (s *sink) writeMisuse(h slog.Handler, m zaprMisuse, pc uintptr, stack string) {
	if !h.Enabled(context.Background(), zapDPanicLevel) {
		return
	}
	r := slog.NewRecord(time.Now(), zapDPanicLevel, m.msg, pc)
	r.AddAttrs(m.attr)
	if stack != "" && s.stackAt(zapDPanicLevel) {
		r.AddAttrs(slog.String(s.cfg.stackKey, stack))
	}
	if herr := h.Handle(context.Background(), r); herr != nil && s.cfg.onError != nil {
		s.cfg.onError(herr)
	}
}

// stackAt reports whether records at level get a stack trace.
func (s *sink) stackAt(level slog.Level) bool {
	return s.cfg.stackLevel != nil && level >= s.cfg.stackLevel.Level()
}

// callSite returns the pc that runtime.Callers(skip) gives when called by
// callSite's caller and, with stack, the formatted trace from there. (log
// calls runtime.Callers itself, saving a frame on its hot path.)
func (s *sink) callSite(skip int, stack bool) (pc uintptr, trace string) {
	skip++ // callSite's own frame
	if stack {
		var pcs [maxStack]uintptr
		n := runtime.Callers(skip, pcs[:])
		if n > 0 {
			pc = pcs[0]
		}
		return pc, formatStack(pcs[:n])
	}
	if !s.cfg.noPC {
		var pcs [1]uintptr
		runtime.Callers(skip, pcs[:])
		pc = pcs[0]
	}
	return pc, ""
}

// zaprLevel maps a record's level as zapr's slog Handle does for the
// levels that the zap encodings would otherwise name DPanic or Panic:
// Error+1 to Error+3 become Error. (zapr maps every level from Error up;
// the zap encodings keep LevelFatal, Error+4, and above visible as
// "fatal".)
func zaprLevel(l slog.Level) slog.Level {
	if l > slog.LevelError && l < slog.LevelError+4 {
		return slog.LevelError
	}
	return l
}
