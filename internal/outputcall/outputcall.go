// Package outputcall calls an output's methods with a panic turned into
// an error: an output is the user's code, and on the bus's goroutines (the
// drainer, a ring file's replay in New) an unrecovered panic would kill
// the process. A call that panicked wrote nothing, as far as the caller
// knows; it retries, counts and reports it like any error.
//
// Each function has one call into the output, and its deferred recover
// keeps it from being inlined: the bus finds those call sites on a
// goroutine's stack to tell an output logging through its own handler.
package outputcall

import (
	"fmt"
	"io"
)

// PanicError is the error an output call that panicked is treated as.
type PanicError struct {
	Op    string // "write" or "sync"
	Value any    // what the output panicked with
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("the output's %s panicked: %v", e.Op, e.Value)
}

// Batcher is an output that takes a batch of records at once.
type Batcher interface {
	WriteBatch(records [][]byte) (written int, err error)
}

// Write is w.Write(p), with a panic turned into an error.
func Write(w io.Writer, p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, &PanicError{Op: "write", Value: r}
		}
	}()
	return w.Write(p)
}

// WriteBatch is w.WriteBatch(recs), with a panic turned into an error.
func WriteBatch(w Batcher, recs [][]byte) (k int, err error) {
	defer func() {
		if r := recover(); r != nil {
			k, err = 0, &PanicError{Op: "write", Value: r}
		}
	}()
	return w.WriteBatch(recs)
}

// Sync is s.Sync(), with a panic turned into an error.
func Sync(s interface{ Sync() error }) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Op: "sync", Value: r}
		}
	}()
	return s.Sync()
}

// Path is o.Path() (a file output's path), with ok false if it panicked.
func Path(o interface{ Path() string }) (p string, ok bool) {
	defer func() {
		if recover() != nil {
			p, ok = "", false
		}
	}()
	return o.Path(), true
}
