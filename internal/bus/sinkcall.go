package bus

import (
	"fmt"
	"io"
)

// A sink is the user's code: its Write, WriteBatch or Sync may panic. On
// the drainer's goroutine an unrecovered panic would kill the process; on a
// producer's (a write-through) it would leave the record's reservation
// uncommitted, and the drainer would wait at it forever. So every call into
// the sink goes through these wrappers, which turn a panic into a
// *sinkPanicError with nothing written: the bus then retries, counts and
// reports it like any write error.

// sinkPanicError is the error a sink call that panicked is treated as.
type sinkPanicError struct {
	Op    string // "write" or "sync"
	Value any    // what the sink panicked with
}

func (e *sinkPanicError) Error() string {
	return fmt.Sprintf("the output's %s panicked: %v", e.Op, e.Value)
}

// sinkWrite is w.Write(p), with a panic turned into an error.
func sinkWrite(w io.Writer, p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, &sinkPanicError{Op: "write", Value: r}
		}
	}()
	return w.Write(p)
}

// sinkWriteBatch is w.WriteBatch(recs), with a panic turned into an error.
func sinkWriteBatch(w BatchWriter, recs [][]byte) (k int, err error) {
	defer func() {
		if r := recover(); r != nil {
			k, err = 0, &sinkPanicError{Op: "write", Value: r}
		}
	}()
	return w.WriteBatch(recs)
}

// sinkPath is o.Path() (a file sink's path), with ok false if it panicked.
func sinkPath(o interface{ Path() string }) (p string, ok bool) {
	defer func() {
		if recover() != nil {
			p, ok = "", false
		}
	}()
	return o.Path(), true
}

// sinkSync is s.Sync(), with a panic turned into an error.
func sinkSync(s Syncer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &sinkPanicError{Op: "sync", Value: r}
		}
	}()
	return s.Sync()
}
