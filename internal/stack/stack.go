// Package stack captures and formats goroutine stacks in zap's stacktrace
// format, and finds the stacks that errors carry (github.com/pkg/errors and
// github.com/go-errors/errors style) without depending on those packages.
// It is shared by the root handler (Options.Features.StackTraceLevel) and logrbridge
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
//
// The walk looks at no more than maxNodes errors in all, shared fairly
// between the branches of Unwrap() []error, and follows no path deeper than
// maxDepth, so a chain that branches (a tree, or a DAG visited as one) or
// cycles costs bounded time. A StackTrace, Callers or
// Unwrap method that panics is treated as absent: the logging call that
// asked must not crash.
func OfError(err error) []uintptr {
	var found []uintptr
	walk(err, 0, maxNodes, func(e error) {
		if pcs := carried(e); pcs != nil {
			found = pcs
		}
	})
	return found
}

const (
	// maxDepth bounds one path of the walk (a cycle without branches).
	maxDepth = 32
	// maxNodes bounds the errors visited over all branches: depth alone
	// does not bound a chain whose Unwrap() []error branches (2^depth
	// paths), nor one that cycles through a branching node.
	maxNodes = 256
)

// walk visits err's chain depth first, visiting at most budget errors, and
// returns how many it visited. At a branch, each child gets an equal share
// of what is left (children that use less leave more for the later ones),
// so a branch that would use up any budget (a cycle through a branching
// node) cannot starve its siblings.
func walk(err error, depth, budget int, visit func(error)) (used int) {
	for ; err != nil && depth < maxDepth && used < budget; depth++ {
		used++
		visit(err)
		many, isMany, one := unwrap(err)
		if !isMany {
			err = one
			continue
		}
		for i, e := range many {
			left := budget - used
			if left <= 0 {
				break
			}
			used += walk(e, depth+1, max(left/(len(many)-i), 1), visit)
		}
		break
	}
	return used
}

// unwrap returns err's wrapped errors: many (Unwrap() []error, isMany), or
// one (Unwrap() error). An Unwrap that panics wraps nothing.
func unwrap(err error) (many []error, isMany bool, one error) {
	defer func() {
		if recover() != nil {
			many, one = nil, nil
		}
	}()
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		return u.Unwrap(), true, nil
	}
	return nil, false, errors.Unwrap(err)
}

type callers interface{ Callers() []uintptr }

var uintptrType = reflect.TypeFor[uintptr]()

// carried returns the stack that e itself carries, or nil.
func carried(e error) (pcs []uintptr) {
	defer func() {
		if recover() != nil {
			pcs = nil // a Callers or StackTrace that panics carries no usable stack
		}
	}()
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
