package filesink

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// ErrClosed is returned by writes, Sync and Rotate after Close.
var ErrClosed = errors.New("filesink: file is closed")

// File is an append-only, rotating log file. Its methods are safe for
// concurrent use.
type File struct {
	path   string // cleaned path as given
	dir    string
	prefix string // backup name prefix: base name without extension + "-"
	ext    string // extension of the base name, e.g. ".log"
	opts   Options
	loc    *time.Location

	// System calls, replaceable by tests in this package.
	writev   func(h handle, iovs [][]byte) (int, error)
	truncate func(h handle, size int64) error
	datasync func(h handle) error
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
	rename   func(oldpath, newpath string) error
	lock     func(h handle) error
	allocate func(h handle, off, n int64) error
	// closeBeforeRename: rotation closes the file before renaming it, as
	// Windows requires (renameOpenFails); tests set it on other systems.
	closeBeforeRename bool

	mu         sync.Mutex
	file       *os.File // nil after a failed reopen; the next write retries
	fd         handle
	ident      os.FileInfo // the open file's identity, for os.SameFile
	perm       os.FileMode // mode of the next file created: the current file's
	size       int64       // bytes of whole records in the file
	allocEnd   int64       // end of the preallocated range (or of the last failed attempt)
	cutTo      int64       // >= 0: a cut back to this size is still pending
	cutEnd     int64       // with cutTo >= 0: the end of the torn bytes to cut
	dirty      bool        // written since the last fdatasync
	lastSync   time.Time
	nextRotate time.Time
	nextCheck  time.Time
	closed     bool
	closeDone  chan struct{} // closed when the first Close has finished
	closeErr   error         // the first Close's result, set before closeDone is closed
	repair     *TailRepair
	lockWarned bool        // the file system's lack of locks was reported
	repairDue  atomic.Bool // repair is held for SettleTornTail, not reported yet
	// renameFailing: the last rotation could not rename the file, which
	// keeps taking the records; it was reported, and is not again until a
	// rotation succeeds. retrySize is then the size at which size-based
	// rotation tries again (one more MaxSize of records).
	renameFailing bool
	retrySize     int64
	iov           [][]byte
	one           [1][]byte
	pending       []error // reported after mu is released
	syncs         int     // fdatasync calls, for tests
	rotations     int     // completed rotations and reopens, for tests

	errMu      sync.Mutex
	lastErr    time.Time
	suppressed int

	millCh chan struct{} // capacity 1: "backups changed"
	quit   chan struct{}
	wg     sync.WaitGroup
}

// Path returns the path of the current log file.
func (f *File) Path() string { return f.path }

// String returns "filesink.File(<path>)", so that %v of a *File names the
// file instead of printing its fields.
func (f *File) String() string { return "filesink.File(" + f.path + ")" }

// Repaired returns what Open did to a torn tail, or nil if the file ended in
// a newline (or was empty or new). After SettleTornTail found the fragment
// written again by the durable ring, it returns the settled repair
// (Replayed set).
func (f *File) Repaired() *TailRepair {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.repair
}

// Write appends p as one record. p should be one or more whole lines ending
// in '\n'; it is written as given (a missing final newline is not added).
// On error, either n is 0 and nothing of p is in the file, or n is len(p)
// and all of p is: the write failed part-way and the rest of p was then
// written, but the error is still returned (the disk is failing), so a
// caller that retries must look at n. The one exception is another program
// appending to the file at the same moment: a part of p that could not be cut
// back without removing the other program's bytes stays (n is 0), and the
// error says so.
func (f *File) Write(p []byte) (n int, err error) {
	f.settleRepair()
	f.mu.Lock()
	f.one[0] = p
	written, err := f.writeLocked(f.one[:])
	f.one[0] = nil
	errs := f.takePending()
	f.mu.Unlock()
	f.deliver(errs)
	if written == 1 {
		return len(p), err
	}
	return 0, err
}

// WriteBatch appends the records (whole lines ending in '\n'; the slices
// are not retained) with as few writev(2) calls as possible and returns how
// many leading records are completely in the file. On an error part-way, the
// partly written record is completed or cut back, so the file holds exactly
// the first written records (unless another program appended to the file at
// the same moment: see Write); the error is returned promptly (the bus
// retries with back-off and reports it once) and not passed to
// Options.OnError.
func (f *File) WriteBatch(records [][]byte) (written int, err error) {
	f.settleRepair()
	f.mu.Lock()
	written, err = f.writeLocked(records)
	errs := f.takePending()
	f.mu.Unlock()
	f.deliver(errs)
	return written, err
}

// Sync flushes the written data to stable storage (fdatasync), whatever the
// Sync policy. The bus calls it on Flush.
func (f *File) Sync() error {
	f.settleRepair()
	f.mu.Lock()
	err := f.syncNow()
	errs := f.takePending()
	f.mu.Unlock()
	f.deliver(errs)
	return forBus(err)
}

// Rotate starts a new file now, for SIGHUP-driven setups; it is safe to call
// concurrently with writes. If the path was already renamed or deleted
// underneath (logrotate), it just reopens the path; if the current file is
// empty, it does nothing.
func (f *File) Rotate() error {
	f.settleRepair()
	f.mu.Lock()
	var err error
	if f.closed {
		err = ErrClosed
	} else if !f.checkPath() {
		err = f.rotateLocked()
	}
	errs := f.takePending()
	f.mu.Unlock()
	f.deliver(errs)
	return err
}

// Close syncs (unless the policy is SyncNever), releases preallocated space,
// closes the file and stops and waits for the background goroutines,
// including a compression in progress and one still pending. Close is
// idempotent and safe from several goroutines: every call returns once the
// first has finished, with its result.
func (f *File) Close() error {
	f.settleRepair()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		// A barrier: return only once the first Close has synced and its
		// background work (compression, interval sync) has stopped.
		<-f.closeDone
		return f.closeErr
	}
	var err error
	if f.file != nil && f.opts.Sync != SyncNever && f.dirty {
		err = f.syncNow() // before closed is set: syncNow refuses a closed File
	}
	f.closed = true
	if f.file != nil {
		err = errors.Join(err, f.closeCurrent())
	}
	errs := f.takePending()
	f.mu.Unlock()
	f.deliver(errs)
	close(f.quit)
	f.wg.Wait()
	f.errMu.Lock()
	n := f.suppressed
	f.suppressed = 0
	f.errMu.Unlock()
	if n > 0 {
		f.emit(fmt.Errorf("filesink: %s: %s suppressed by rate limiting", f.path, plural.Count(n, "error was", "errors were")))
	}
	f.closeErr = err
	close(f.closeDone) // publishes closeErr to the Close calls waiting above
	return err
}

// now is the clock in the configured zone.
func (f *File) now() time.Time { return f.opts.Clock().In(f.loc) }
