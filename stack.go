package asyncbus

import (
	"log/slog"
	"runtime"
	"strings"

	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/stack"
)

// stackTraceKey is the key of the stack trace that Options.Features.StackTraceLevel
// adds to records.
const stackTraceKey = "stacktrace"

// stackState is the handler's stack trace setting.
type stackState struct {
	level slog.Leveler // nil: off
	place stackPlace
}

// stackPlace is where a record's stack trace goes, by format.
type stackPlace uint8

const (
	// stackTop: a top-level attribute, written with the Context fields
	// (JSON, the cloud presets, Text, Logfmt), outside the groups of WithGroup.
	stackTop stackPlace = iota
	// stackBelow: on the lines below the record, as zap writes it (Console).
	stackBelow
	// stackLast: the record's last attribute, which the zap formats write
	// as zap's entry stack, after their namespaces are closed.
	stackLast
)

// want reports whether records at level l get a stack trace. Off, it is one
// load and compare (inlined), and allocates nothing.
func (s *stackState) want(l slog.Level) bool {
	return s.level != nil && l >= s.level.Level()
}

func newStackState(level slog.Leveler, f Format) stackState {
	place := stackLast
	switch f {
	case encode.JSON, encode.Text, encode.Logfmt, encode.GCPJSON, encode.ECSJSON, encode.DatadogJSON:
		place = stackTop
	case encode.Console:
		place = stackBelow
	}
	return stackState{level: level, place: place}
}

// addStack is the encode stage's stack trace, for a record at or above
// Features.StackTraceLevel. It takes the stack on the logging goroutine
// (recordStack) and puts it under "stacktrace" at the top level, whatever
// groups WithGroup opened, as zap has it, where the format writes it: a
// top-level field after the Context fields (JSON, Text, Logfmt and the
// cloud presets: fields is returned with it, in b's FieldWriter), the lines
// returned as below, to follow the record (Console), or the record's last
// attribute, r becoming a copy with it (the zap formats, which write it as
// zap's entry stack after the closed namespaces, and an output's own Encoder).
func (h *Handler) addStack(r *slog.Record, b *buffer, fields []slog.Attr) (_ []slog.Attr, below string) {
	st, ok := recordStack(*r)
	if !ok {
		return fields, ""
	}
	switch h.tree.stack.place {
	case stackTop:
		if h.tree.context == nil {
			b.fields.reset(false)
		}
		b.fields.AddAttr(slog.String(stackTraceKey, st))
		return b.fields.attrs, ""
	case stackBelow:
		return fields, st
	}
	*r = r.Clone() // the caller's record may share its attribute array
	r.AddAttrs(slog.String(stackTraceKey, st))
	return fields, ""
}

// recordStack returns the stack trace for r, or false when r already has a
// top-level "stacktrace" attribute (logrbridge's StackTraces adds one): the
// stack carried by the first error attribute (in record order, groups
// included) whose chain holds a github.com/pkg/errors-style StackTrace() or
// go-errors-style Callers() (internal/stack.OfError), else the logging
// call's, from the record's PC or, when the PC is 0 or not on this stack
// (handleAttrs, a wrapping handler that made a new record), from the first
// frame outside log/slog and this module's packages (test files excepted).
func recordStack(r slog.Record) (string, bool) {
	var carried []uintptr
	has := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == stackTraceKey {
			has = true
			return false
		}
		if carried == nil {
			carried = attrStack(a.Value, 0)
		}
		return true
	})
	switch {
	case has:
		return "", false
	case carried != nil:
		return stack.Format(carried), true
	}
	return stack.From(r.PC, ownFrame), true
}

// attrStack returns the stack carried by an error in v (or in v's group),
// or nil. LogValuers are not resolved: that would run them twice.
func attrStack(v slog.Value, depth int) []uintptr {
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return stack.OfError(err)
		}
	case slog.KindGroup:
		if depth > 16 {
			return nil
		}
		for _, a := range v.Group() {
			if pcs := attrStack(a.Value, depth+1); pcs != nil {
				return pcs
			}
		}
	}
	return nil
}

// ownFrame reports frames of the logging machinery, left out at the top of
// a logging call's stack when the record's PC does not mark the call:
// log/slog and this module's packages, except their test files.
func ownFrame(f runtime.Frame) bool {
	fn := f.Function
	own := strings.HasPrefix(fn, "log/slog.") ||
		strings.HasPrefix(fn, "github.com/asyncbus/asyncbus.") ||
		strings.HasPrefix(fn, "github.com/asyncbus/asyncbus/")
	return own && !strings.HasSuffix(f.File, "_test.go")
}
