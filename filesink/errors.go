// Errors: their wording for the bus and for the File's own callback, and
// the rate-limited reporting to Options.OnError.

package filesink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// fail returns err for the caller (the bus), which reports it: the sink's
// own callback keeps background events only.
func (f *File) fail(err error) error {
	return forBus(err)
}

func (f *File) takePending() []error {
	if len(f.pending) == 0 {
		return nil
	}
	errs := f.pending
	f.pending = nil
	return errs
}

func (f *File) deliver(errs []error) {
	for _, err := range errs {
		f.report(err)
	}
}

// report passes err to OnError, at most once per ErrorInterval; the errors
// suppressed meanwhile are counted in the next message (and by Close).
func (f *File) report(err error) {
	f.errMu.Lock()
	now := f.opts.Clock()
	if !f.lastErr.IsZero() && now.Sub(f.lastErr) < f.opts.ErrorInterval && now.Sub(f.lastErr) >= 0 {
		f.suppressed++
		f.errMu.Unlock()
		return
	}
	n := f.suppressed
	f.suppressed, f.lastErr = 0, now
	f.errMu.Unlock()
	if n > 0 {
		err = fmt.Errorf("%w (and %s suppressed since the last report)", err, plural.Count(n, "more error", "more errors"))
	}
	f.emit(err)
}

func (f *File) emit(err error) {
	if f.opts.OnError != nil {
		f.opts.OnError(err)
		return
	}
	fmt.Fprintf(os.Stderr, "%v\n", err)
}

// fileErr wraps a file-system error; permission problems get an explanation.
// Its message names the package, the operation and the path; forBus drops
// the package and path for errors handed to the bus, which names the output
// itself.
func fileErr(op, path string, err error) error {
	short := op + ": " + err.Error()
	if errors.Is(err, fs.ErrPermission) {
		short = fmt.Sprintf("cannot %s: permission denied: the process (uid %d) needs write and search permission on the directory and write permission on the file: %v",
			op, os.Geteuid(), err)
		return &fsError{full: fmt.Sprintf("filesink: cannot %s %s: permission denied: the process (uid %d) needs write and search permission on the directory and write permission on the file: %v",
			op, path, os.Geteuid(), err), short: short, err: err}
	}
	return &fsError{full: fmt.Sprintf("filesink: %s %s: %v", op, path, err), short: short, err: err}
}

// fsError is fileErr's error: full for the sink's own callback and
// constructor, short for the bus.
type fsError struct {
	full, short string
	err         error
}

func (e *fsError) Error() string { return e.full }

func (e *fsError) Unwrap() error { return e.err }

// forBus returns err as the bus should see it: the bus reports it once, as
// "asyncbus: write <path>: <err>", so the sink's prefix and path go.
func forBus(err error) error {
	if fe, ok := err.(*fsError); ok {
		return &busError{fe}
	}
	return err
}

type busError struct{ fe *fsError }

func (e *busError) Error() string { return e.fe.short }

func (e *busError) Unwrap() error { return e.fe.err }
