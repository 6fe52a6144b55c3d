// Package stack captures and formats goroutine stacks in zap's stacktrace
// format, and finds the stacks that errors carry (github.com/pkg/errors and
// github.com/go-errors/errors style) without depending on those packages.
// It is shared by the root handler (Options.StackTraceLevel) and logrbridge
// (StackTraces).
package stack

import (
	"errors"
	"reflect"
	"runtime"
	"strconv"
)

// MaxFrames bounds the frames captured and written.
const MaxFrames = 64

// Format renders pcs like zap's stacktrace field: "func\n\tfile:line" per
// frame, frames separated by "\n". Like zap, it leaves out the final frame
// when that is the runtime's goroutine entry (runtime.goexit or
// runtime.main), which says nothing about the program.
func Format(pcs []uintptr) string {
	return string(Append(nil, pcs, nil))
}

// Append appends Format(pcs) to dst, leaving out leading frames for which
// skip (if non-nil) reports true.
func Append(dst []byte, pcs []uintptr, skip func(runtime.Frame) bool) []byte {
	if len(pcs) == 0 {
		return dst
	}
	frames := runtime.CallersFrames(pcs)
	first := true
	skipping := skip != nil
	for {
		f, more := frames.Next()
		if skipping && skip(f) && more {
			continue // never skip the last frame: an empty stack helps nobody
		}
		skipping = false
		if !more && !first && (f.Function == "runtime.goexit" || f.Function == "runtime.main") {
			break
		}
		if !first {
			dst = append(dst, '\n')
		}
		first = false
		dst = append(dst, f.Function...)
		dst = append(dst, "\n\t"...)
		dst = append(dst, f.File...)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(f.Line), 10)
		if !more {
			break
		}
	}
	return dst
}

// From returns the stack of From's caller's goroutine, in Format's
// format, starting at the frame whose PC is pc (a slog record's PC, taken
// by runtime.Callers too). When pc is 0 or not on the stack, it starts at
// the first frame, beginning with From's caller, for which skip reports
// false (skip nil: From's caller).
func From(pc uintptr, skip func(runtime.Frame) bool) string {
	var pcs [MaxFrames]uintptr
	n := runtime.Callers(2, pcs[:])
	if pc != 0 {
		for i := range n {
			if pcs[i] == pc {
				return string(Append(nil, pcs[i:n], nil))
			}
		}
	}
	return string(Append(nil, pcs[:n], skip))
}

// OfError returns the program counters of the stack carried by err's chain
// (errors.Unwrap and Unwrap() []error, depth first), or nil. A value
// carries a stack when it has a method StackTrace() returning a slice
// whose elements are of a uintptr kind (github.com/pkg/errors'
// StackTrace of Frame), or Callers() []uintptr (github.com/go-errors/errors).
// Of several, the innermost is returned: the one recorded closest to
// where the error was made (pkg/errors records one at every Wrap).
func OfError(err error) []uintptr {
	var found []uintptr
	walk(err, 0, func(e error) {
		if pcs := carried(e); pcs != nil {
			found = pcs
		}
	})
	return found
}

// maxDepth bounds the walk of an error chain (a cyclic Unwrap must not
// hang the logging call).
const maxDepth = 100

func walk(err error, depth int, visit func(error)) {
	for ; err != nil && depth < maxDepth; depth++ {
		visit(err)
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, depth+1, visit)
			}
			return
		default:
			err = errors.Unwrap(err)
		}
	}
}

type callers interface{ Callers() []uintptr }

var uintptrType = reflect.TypeFor[uintptr]()

// carried returns the stack that e itself carries, or nil.
func carried(e error) (pcs []uintptr) {
	if c, ok := e.(callers); ok {
		return c.Callers()
	}
	m := reflect.ValueOf(e).MethodByName("StackTrace")
	if !m.IsValid() {
		return nil
	}
	t := m.Type()
	if t.NumIn() != 0 || t.NumOut() != 1 || t.Out(0).Kind() != reflect.Slice || t.Out(0).Elem().Kind() != reflect.Uintptr {
		return nil
	}
	defer func() {
		if recover() != nil {
			pcs = nil // a StackTrace that panics carries no usable stack
		}
	}()
	st := m.Call(nil)[0]
	if st.Len() == 0 {
		return nil
	}
	if st.Type().Elem() == uintptrType {
		return st.Convert(reflect.TypeFor[[]uintptr]()).Interface().([]uintptr)
	}
	pcs = make([]uintptr, st.Len())
	for i := range pcs {
		pcs[i] = uintptr(st.Index(i).Uint())
	}
	return pcs
}
