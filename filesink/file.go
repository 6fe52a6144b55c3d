package filesink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrClosed is returned by writes, Sync and Rotate after Close.
var ErrClosed = errors.New("filesink: file is closed")

// ErrLocked is returned (wrapped; test with errors.Is) by Open when another
// File, in this or another process, has the log file open: there is one File
// per path (lumberjack assumes as much; filesink checks it). A write that has
// to reopen the path (after a rotation, or after logrotate moved the file)
// and finds it locked returns it too, and writes nothing; the asyncbus bus
// retries.
var ErrLocked = errors.New("filesink: the log file is open in another File")

// errLockHeld is lockFD's answer when another File holds the lock.
var errLockHeld = errors.New("lock held elsewhere")

// maxOpenAttempts bounds openCurrent's retries when the path is replaced
// between opening and locking it.
const maxOpenAttempts = 8

// iovMax is IOV_MAX on Linux: the most slices one writev(2) accepts.
const iovMax = 1024

// maxZeroWrites bounds retries of writes that make no progress and report
// no error (or EINTR), so a misbehaving file system cannot make us spin.
const maxZeroWrites = 3

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
	writev   func(fd int, iovs [][]byte) (int, error)
	truncate func(fd int, size int64) error
	datasync func(fd int) error
	openFile func(name string, flag int, perm os.FileMode) (*os.File, error)
	rename   func(oldpath, newpath string) error
	lock     func(fd int) error
	allocate func(fd int, off, n int64) error

	mu         sync.Mutex
	file       *os.File // nil after a failed reopen; the next write retries
	fd         int
	dev, ino   uint64
	size       int64 // bytes of whole records in the file
	allocEnd   int64 // end of the preallocated range (or of the last failed attempt)
	cutTo      int64 // >= 0: a cut back to this size is still pending
	cutEnd     int64 // with cutTo >= 0: the end of the torn bytes to cut
	dirty      bool  // written since the last fdatasync
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

// Open opens (creating it and its missing parent directories if needed) the
// log file at path for appending. There is one File per path (lumberjack
// assumes as much; filesink checks it): Open takes an exclusive lock on the
// file (flock(2)) and holds it while the File has the file open, including
// each new file after a rotation; if another File, in this or another
// process, has it open, Open fails with ErrLocked and leaves the file alone.
// (A file system without locks, such as NFS without a lock manager, is
// reported to OnError and used unlocked.) If the file does not end in a
// newline it is repaired next (see TailRepair; the repair is reported at the
// File's first use, see SettleTornTail). Leftover temporary compression
// files are removed, and retention and compression run once in the
// background.
func Open(path string, opts Options) (*File, error) {
	return open(path, opts, nil)
}

// open is Open with replaceable system calls (tests).
func open(path string, opts Options, hook func(*File)) (*File, error) {
	opts.setDefaults()
	if path == "" {
		return nil, errors.New("filesink: empty path")
	}
	if opts.Perm&^fs.ModePerm != 0 {
		return nil, fmt.Errorf("filesink: Perm %v has bits other than permissions", opts.Perm)
	}
	path = filepath.Clean(path)
	if opts.Symlink != "" {
		abs, err1 := filepath.Abs(path)
		link, err2 := filepath.Abs(opts.Symlink)
		if err1 == nil && err2 == nil && abs == link {
			return nil, fmt.Errorf("filesink: Symlink %q is the log file itself", opts.Symlink)
		}
	}
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	f := &File{
		path:      path,
		dir:       filepath.Dir(path),
		prefix:    strings.TrimSuffix(base, ext) + "-",
		ext:       ext,
		opts:      opts,
		loc:       time.Local,
		writev:    newWritev(),
		truncate:  truncateFD,
		datasync:  datasync,
		openFile:  os.OpenFile,
		rename:    os.Rename,
		lock:      lockFD,
		allocate:  preallocate,
		cutTo:     -1,
		iov:       make([][]byte, 0, 64),
		closeDone: make(chan struct{}),
	}
	if opts.UTC {
		f.loc = time.UTC
	}
	if hook != nil {
		hook(f)
	}
	if err := os.MkdirAll(f.dir, opts.DirPerm); err != nil {
		return nil, fileErr("create directory", f.dir, err)
	}
	if err := f.openCurrent(); err != nil {
		return nil, err
	}
	if err := f.repairTail(); err != nil {
		_ = f.file.Close()
		return nil, err
	}
	if err := f.ensureSymlink(); err != nil {
		_ = f.file.Close()
		return nil, err
	}
	now := f.now()
	f.lastSync = now
	f.nextCheck = now.Add(opts.CheckInterval)
	f.nextRotate = periodEnd(now, opts.Rotate)
	if f.size > 0 && opts.Rotate != RotateNone {
		// An existing file from an earlier period is rotated by the first
		// write of this one.
		if fi, err := f.file.Stat(); err == nil {
			f.nextRotate = periodEnd(fi.ModTime().In(f.loc), opts.Rotate)
		}
	}
	f.removeTemps()
	f.quit = make(chan struct{})
	if opts.Compress || opts.MaxBackups > 0 || opts.MaxAge > 0 {
		f.millCh = make(chan struct{}, 1)
		f.millCh <- struct{}{} // process backups left by earlier runs
		f.wg.Add(1)
		go f.mill()
	}
	if opts.Sync == SyncInterval {
		tick, stop := opts.testTick, func() {}
		if tick == nil {
			t := time.NewTicker(opts.SyncInterval)
			tick, stop = t.C, t.Stop
		}
		f.wg.Add(1)
		go f.syncLoop(tick, stop)
	}
	// A repair is reported at the first use (see SettleTornTail): a durable
	// ring that replays the torn record whole first says so.
	f.repairDue.Store(f.repair != nil)
	f.deliver(f.takePending()) // a file system without locks
	return f, nil
}

// Path returns the path of the current log file.
func (f *File) Path() string { return f.path }

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
		f.emit(fmt.Errorf("filesink: %s: %d errors were suppressed by rate limiting", f.path, n))
	}
	f.closeErr = err
	close(f.closeDone) // publishes closeErr to the Close calls waiting above
	return err
}

// writeLocked writes records with f.mu held.
func (f *File) writeLocked(records [][]byte) (int, error) {
	if f.closed {
		return 0, ErrClosed
	}
	var total int64
	for _, r := range records {
		total += int64(len(r))
	}
	if total == 0 {
		return len(records), nil
	}
	now := f.now()
	if f.opts.CheckInterval > 0 && !now.Before(f.nextCheck) {
		f.nextCheck = now.Add(f.opts.CheckInterval)
		f.checkPath()
	}
	if f.file == nil {
		if err := f.openCurrent(); err != nil {
			return 0, f.fail(err)
		}
	}
	if f.cutTo >= 0 {
		if err := f.applyCut(); err != nil {
			if f.cutTo >= 0 {
				return 0, f.fail(fmt.Errorf("cannot cut back a partly written record, refusing to write after it: %w", err))
			}
			// Left in the file for good: report it, and write on.
			f.pending = append(f.pending, fmt.Errorf("filesink: %s: %w", f.path, err))
		}
	}
	if f.size > 0 && ((f.opts.MaxSize > 0 && f.size+total > max(f.opts.MaxSize, f.retrySize)) ||
		(f.opts.Rotate != RotateNone && !now.Before(f.nextRotate))) {
		if err := f.rotateLocked(); err != nil {
			var re *renameError
			if !errors.As(err, &re) {
				return 0, f.fail(err)
			}
			// The file could not be renamed and is still open: keep appending
			// to it (losing records is worse than an oversized file). The
			// first failure of a streak is reported; the next size or time
			// trigger tries again.
			if !f.renameFailing {
				f.pending = append(f.pending, fmt.Errorf("%w; writing on to %s, rotation is retried later", err, f.path))
			}
			f.renameFailing = true
			if f.opts.MaxSize > 0 {
				f.retrySize = f.size + f.opts.MaxSize
			}
		}
	} else if f.opts.Rotate != RotateNone && !now.Before(f.nextRotate) {
		f.nextRotate = periodEnd(now, f.opts.Rotate) // empty file: nothing to rotate
	}
	if f.opts.Preallocate > 0 && f.size+total > f.allocEnd {
		f.preallocate(f.size + total)
	}

	written, err := f.writeRecords(records)
	if written > 0 {
		f.dirty = true
		switch f.opts.Sync {
		case SyncEveryBatch:
			f.syncOrReport()
		case SyncInterval:
			if now.Sub(f.lastSync) >= f.opts.SyncInterval {
				f.syncOrReport()
			}
		}
	}
	if err != nil {
		err = f.fail(err)
		f.checkPath() // a replaced or deleted file is reopened for the retry
	}
	return written, err
}

// writeRecords issues the writev calls and, on an error part-way through a
// record, completes it or cuts the file back to the last whole record.
func (f *File) writeRecords(records [][]byte) (int, error) {
	idx, off := 0, 0     // records[idx][:off] is already in the file
	tornEnd := int64(-1) // with off > 0: the file offset just after records[idx][:off]; -1 unknown
	zero := 0
	var err error
	for idx < len(records) {
		iov := append(f.iov[:0], records[idx][off:])
		for j := idx + 1; j < len(records) && len(iov) < iovMax; j++ {
			iov = append(iov, records[j])
		}
		var n int
		n, err = f.writev(f.fd, iov)
		clear(iov) // do not keep the caller's slices alive
		f.iov = iov[:0]
		n = max(n, 0)
		startIdx, startOff := idx, off
		idx, off = f.advance(records, idx, off, n)
		if n > 0 && off > 0 { // stopped inside a record: a short or failed write (rare)
			tornEnd = f.tornEndAfter(tornEnd, n, idx == startIdx && startOff > 0)
		}
		if err == syscall.EINTR || (err == nil && n == 0) {
			if zero++; zero < maxZeroWrites {
				err = nil
				continue
			}
			if err == nil {
				err = io.ErrShortWrite
			}
		}
		if err != nil {
			break
		}
		zero = 0
	}
	if err == nil || off == 0 {
		return idx, err
	}
	// A record is partly in the file: try once to complete it, else cut back.
	rest := [][]byte{records[idx][off:]} // error path only: the allocation is fine
	n, cerr := f.writev(f.fd, rest)
	if cerr == nil && n == len(rest[0]) {
		f.size += int64(len(rest[0]))
		return idx + 1, err
	}
	torn := int64(off)
	if n > 0 {
		tornEnd = f.tornEndAfter(tornEnd, n, true)
		torn += int64(n)
	}
	return idx, errors.Join(err, f.cutTorn(tornEnd, torn))
}

// tornEndAfter returns the file offset just after the bytes of a record that
// a write stopped inside: the descriptor's offset, which O_APPEND leaves just
// after the n bytes the write appended. continued says the record began in
// earlier writes, which ended at prev; its bytes are contiguous, and the
// offset is known, only if this write started there. -1: unknown (another
// writer appended in between, or the offset could not be read).
func (f *File) tornEndAfter(prev int64, n int, continued bool) int64 {
	pos, err := syscall.Seek(f.fd, 0, io.SeekCurrent)
	if err != nil || (continued && (prev < 0 || pos-int64(n) != prev)) {
		return -1
	}
	return pos
}

// cutTorn removes the n bytes of a partly written record that end at file
// offset end (-1: unknown), so that the file ends with the last whole record.
// It cuts only when those bytes are still the file's last ones: if the file
// grew underneath (another program appended after them), cutting would remove
// the other program's bytes, so they stay and the error says so. A failed
// truncation stays pending (f.cutTo) and is retried before the next write.
func (f *File) cutTorn(end, n int64) error {
	if end < 0 {
		if fi, err := f.file.Stat(); err == nil {
			f.size = fi.Size()
		}
		return errTornLeft(n)
	}
	f.size, f.cutTo, f.cutEnd = end-n, end-n, end
	if err := f.applyCut(); err != nil {
		if f.cutTo >= 0 {
			return fmt.Errorf("cut back to %d bytes: %w", f.cutTo, err)
		}
		return err
	}
	return nil
}

// errTornLeft is cutTorn's error for a partly written record it had to
// leave in the file.
func errTornLeft(n int64) error {
	return fmt.Errorf("a partly written record (%d bytes) could not be removed because the file grew underneath (another program appended to it); it stays in the file", n)
}

// advance accounts n more written bytes starting at records[idx][off:] and
// skips empty records.
func (f *File) advance(records [][]byte, idx, off, n int) (int, int) {
	for idx < len(records) {
		rem := len(records[idx]) - off
		if n < rem {
			return idx, off + n
		}
		n -= rem
		f.size += int64(len(records[idx]))
		idx, off = idx+1, 0
	}
	return idx, off
}

// preallocate extends the reserved range to cover need, in whole chunks.
func (f *File) preallocate(need int64) {
	chunk := f.opts.Preallocate
	end := (need + chunk - 1) / chunk * chunk
	from := max(f.allocEnd, f.size)
	if err := f.allocate(f.fd, from, end-from); err != nil {
		if preallocUnsupported(err) {
			f.opts.Preallocate = 0 // unsupported here: stop trying
			f.pending = append(f.pending, fmt.Errorf("filesink: preallocate %s (unsupported, disabled from now on): %w", f.path, err))
			return
		}
		// Out of space, say: the records may still fit, and space may be
		// freed. Try again at the next chunk, not at every write. (Close and
		// rotation trim to the size, releasing any part that was reserved.)
		f.allocEnd = end
		f.pending = append(f.pending, fmt.Errorf("filesink: preallocate %s (retried at the next chunk): %w", f.path, err))
		return
	}
	f.allocEnd = end
}

// syncNow fdatasyncs with f.mu held.
func (f *File) syncNow() error {
	if f.closed {
		return ErrClosed
	}
	if f.file == nil {
		return fileErr("sync", f.path, errors.New("file is not open after an earlier error"))
	}
	f.syncs++
	if err := f.datasync(f.fd); err != nil {
		return fileErr("sync", f.path, err)
	}
	f.dirty = false
	f.lastSync = f.now()
	return nil
}

// syncOrReport syncs per the policy; a failure is reported, not returned,
// since the records themselves were written.
func (f *File) syncOrReport() {
	if err := f.syncNow(); err != nil {
		f.pending = append(f.pending, err)
	}
}

// syncLoop implements SyncInterval for idle periods.
func (f *File) syncLoop(tick <-chan time.Time, stop func()) {
	defer f.wg.Done()
	defer stop()
	for {
		select {
		case <-f.quit:
			return
		case <-tick:
		}
		f.mu.Lock()
		if !f.closed && f.file != nil && f.dirty && f.now().Sub(f.lastSync) >= f.opts.SyncInterval {
			f.syncOrReport()
		}
		errs := f.takePending()
		f.mu.Unlock()
		f.deliver(errs)
		if f.opts.testTickDone != nil {
			f.opts.testTickDone <- struct{}{}
		}
	}
}

// openCurrent opens f.path for appending, locks it (one File per path) and
// records its identity and size.
func (f *File) openCurrent() error {
	for attempt := 1; ; attempt++ {
		file, err := f.openFile(f.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, f.opts.Perm)
		if err != nil {
			return fileErr("open", f.path, err)
		}
		fi, err := file.Stat()
		if err != nil {
			_ = file.Close()
			return fileErr("stat", f.path, err)
		}
		if !fi.Mode().IsRegular() {
			_ = file.Close()
			return fileErr("open", f.path, fmt.Errorf("not a regular file (%v)", fi.Mode().Type()))
		}
		fd := int(file.Fd()) // also puts the descriptor in blocking mode
		if err := f.lockFile(fd); err != nil {
			_ = file.Close()
			return err
		}
		// The lock is on the inode opened. If another File rotated the path
		// away in between (and so released its lock), the path names a new
		// file now: start over, so as not to write into the other's backup.
		// The size is read after locking: until then another File could
		// still have been writing.
		cur, err := os.Stat(f.path)
		if err != nil || !os.SameFile(fi, cur) {
			_ = file.Close()
			if attempt < maxOpenAttempts {
				continue
			}
			return fileErr("open", f.path, errors.New("the path keeps being replaced while opening it"))
		}
		f.file = file
		f.fd = fd
		f.dev, f.ino = fileID(cur)
		f.size = cur.Size()
		f.allocEnd = f.size
		f.cutTo = -1
		f.retrySize = 0 // a new file: size rotation as usual
		return nil
	}
}

// lockFile takes the one-File-per-path lock on fd, the descriptor of f.path.
func (f *File) lockFile(fd int) error {
	err := f.lock(fd)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errLockHeld):
		const msg = "another File, in this or another process, has it open (one File per path)"
		return &fsError{full: fmt.Sprintf("filesink: open %s: %s", f.path, msg), short: "open: " + msg, err: ErrLocked}
	case lockUnsupported(err):
		// No locks on this file system: go on unlocked rather than not
		// logging at all, and say so once.
		if !f.lockWarned {
			f.lockWarned = true
			f.pending = append(f.pending, fmt.Errorf("filesink: cannot lock %s (%w): a second File on this path, in this or another process, will not be detected", f.path, err))
		}
		return nil
	}
	return fileErr("lock", f.path, err)
}

// closeCurrent releases preallocated blocks and closes the file.
func (f *File) closeCurrent() error {
	var err error
	if f.cutTo >= 0 {
		// A torn record is still at the end: cut it before the file is
		// closed or becomes a backup.
		if terr := f.applyCut(); terr != nil && f.cutTo >= 0 {
			err = fmt.Errorf("filesink: %s keeps a partly written record at its end: cut back to %d bytes: %w", f.path, f.cutTo, terr)
		} else if terr != nil {
			err = fmt.Errorf("filesink: %s: %w", f.path, terr)
		}
	}
	f.syncSize()
	if f.allocEnd > f.size && f.cutTo < 0 {
		// Release to the file's real end, which is past f.size when another
		// program appended: its bytes stay. (One appending between the stat
		// and the truncate could still lose its line: advisory only.)
		end := f.size
		if fi, serr := f.file.Stat(); serr == nil {
			end = max(end, fi.Size())
		}
		if end < f.allocEnd {
			if terr := f.truncate(f.fd, end); terr != nil {
				err = errors.Join(err, fmt.Errorf("filesink: release preallocated space of %s: %w", f.path, terr))
			}
		}
	}
	if cerr := f.file.Close(); cerr != nil {
		err = errors.Join(err, fileErr("close", f.path, cerr))
	}
	f.file = nil
	return err
}

// applyCut performs the pending cut back to f.cutTo of the torn bytes
// [cutTo, cutEnd), with f.mu held. It never extends the file: if the file
// shrank underneath to cutTo bytes or fewer (logrotate's copytruncate), the
// torn bytes are gone already and only the sizes are updated. It never cuts
// another writer's bytes: if the file grew past cutEnd, the cut is dropped and
// the error says so (f.cutTo is then -1; it stays set while the cut is still
// pending after an error).
func (f *File) applyCut() error {
	fi, err := f.file.Stat()
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	switch size := fi.Size(); {
	case size <= f.cutTo:
		f.size, f.allocEnd, f.cutTo = size, min(f.allocEnd, size), -1
		return nil
	case size > f.cutEnd:
		n := f.cutEnd - f.cutTo
		f.size, f.cutTo = size, -1
		return errTornLeft(n)
	}
	if err := f.truncate(f.fd, f.cutTo); err != nil {
		return err
	}
	f.size, f.allocEnd, f.cutTo = f.cutTo, f.cutTo, -1 // the truncation released the preallocated blocks
	return nil
}

// syncSize lowers f.size to the file's real size when the file shrank
// underneath (logrotate's copytruncate), so that a later ftruncate to
// f.size can never extend the file with zero bytes.
func (f *File) syncSize() {
	if f.file == nil {
		return
	}
	if fi, err := f.file.Stat(); err == nil && fi.Size() < f.size {
		f.size = fi.Size()
		f.allocEnd = min(f.allocEnd, f.size)
	}
}

// checkPath reopens the path if it no longer names the open file (renamed
// or deleted underneath, e.g. by logrotate) and notices truncation
// (copytruncate). It reports whether it reopened.
func (f *File) checkPath() bool {
	if f.file == nil {
		return false
	}
	fi, err := os.Stat(f.path)
	if err == nil {
		if dev, ino := fileID(fi); dev == f.dev && ino == f.ino {
			if fi.Size() < f.size { // truncated underneath
				f.size, f.allocEnd = fi.Size(), fi.Size()
				if f.cutTo >= 0 { // a pending cut never extends the file
					f.cutTo = min(f.cutTo, fi.Size())
				}
			}
			return false
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		f.pending = append(f.pending, fileErr("stat", f.path, err))
		return false
	}
	if cerr := f.closeCurrent(); cerr != nil {
		f.pending = append(f.pending, cerr)
	}
	f.rotations++
	if oerr := f.openCurrent(); oerr != nil {
		f.pending = append(f.pending, oerr)
		return true
	}
	if serr := f.ensureSymlink(); serr != nil {
		f.pending = append(f.pending, serr)
	}
	return true
}

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
		err = fmt.Errorf("%w (and %d more errors suppressed since the last report)", err, n)
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

// now is the clock in the configured zone.
func (f *File) now() time.Time { return f.opts.Clock().In(f.loc) }

// periodEnd is the start of the rotation period after the one holding t.
func periodEnd(t time.Time, r Rotation) time.Time {
	y, m, d := t.Date()
	switch r {
	case RotateHourly:
		return time.Date(y, m, d, t.Hour()+1, 0, 0, 0, t.Location())
	case RotateDaily:
		return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
	}
	return time.Time{}
}

// fileID is the device and inode of fi.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
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
