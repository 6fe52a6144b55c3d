package bus

import (
	"fmt"
	"io"
)

// An output is the user's code: its Write, WriteBatch or Sync may panic. On
// the drainer's goroutine an unrecovered panic would kill the process. So
// every call into the output goes through these wrappers, which turn a panic into a
// *outputPanicError with nothing written: the bus then retries, counts and
// reports it like any write error.

// outputPanicError is the error an output call that panicked is treated as.
type outputPanicError struct {
	Op    string // "write" or "sync"
	Value any    // what the output panicked with
}

func (e *outputPanicError) Error() string {
	return fmt.Sprintf("the output's %s panicked: %v", e.Op, e.Value)
}

// outputWrite is w.Write(p), with a panic turned into an error.
func outputWrite(w io.Writer, p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, &outputPanicError{Op: "write", Value: r}
		}
	}()
	return w.Write(p)
}

// outputWriteBatch is w.WriteBatch(recs), with a panic turned into an error.
func outputWriteBatch(w BatchWriter, recs [][]byte) (k int, err error) {
	defer func() {
		if r := recover(); r != nil {
			k, err = 0, &outputPanicError{Op: "write", Value: r}
		}
	}()
	return w.WriteBatch(recs)
}

// outputPath is o.Path() (a file output's path), with ok false if it panicked.
func outputPath(o interface{ Path() string }) (p string, ok bool) {
	defer func() {
		if recover() != nil {
			p, ok = "", false
		}
	}()
	return o.Path(), true
}

// outputSync is s.Sync(), with a panic turned into an error.
func outputSync(s Syncer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &outputPanicError{Op: "sync", Value: r}
		}
	}()
	return s.Sync()
}
