package filesink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

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

// Open opens (creating it and its missing parent directories if needed) the
// log file at path for appending. There is one File per path (lumberjack
// assumes as much; filesink checks it): Open takes an exclusive lock on the
// file (flock(2); LockFileEx on Windows) and holds it while the File has the file open, including
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
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	path, err := checkOpenArgs(path, &opts)
	if err != nil {
		return nil, err
	}
	f := newFile(path, opts)
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
	f.initSchedule()
	f.removeTemps()
	f.startBackground()
	// A repair is reported at the first use (see SettleTornTail): a durable
	// ring that replays the torn record whole first says so.
	f.repairDue.Store(f.repair != nil)
	f.deliver(f.takePending()) // a file system without locks
	return f, nil
}

// checkOpenArgs returns Open's path cleaned, or the error for a path or
// options (defaults applied) that Open refuses: an empty path or a Symlink
// that names the log file itself.
func checkOpenArgs(path string, opts *Options) (string, error) {
	if path == "" {
		return "", errors.New("filesink: empty path")
	}
	path = filepath.Clean(path)
	if opts.Symlink != "" {
		abs, err1 := filepath.Abs(path)
		link, err2 := filepath.Abs(opts.Symlink)
		if err1 == nil && err2 == nil && abs == link {
			return "", fmt.Errorf("filesink: Symlink %q is the log file itself", opts.Symlink)
		}
	}
	return path, nil
}

// newFile returns the File for the cleaned path with the real system calls,
// before anything is opened or started.
func newFile(path string, opts Options) *File {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	f := &File{
		path:     path,
		dir:      filepath.Dir(path),
		prefix:   strings.TrimSuffix(base, ext) + "-",
		ext:      ext,
		opts:     opts,
		loc:      time.Local,
		writev:   newWritev(),
		truncate: truncateFD,
		datasync: datasync,
		openFile: os.OpenFile,
		rename:   os.Rename,
		lock:     lockFD,
		allocate: preallocate,
		perm:     opts.Perm,
		// Windows cannot rename a file this process has open.
		closeBeforeRename: renameOpenFails,
		cutTo:             -1,
		iov:               make([][]byte, 0, 64),
		closeDone:         make(chan struct{}),
	}
	if opts.UTC {
		f.loc = time.UTC
	}
	return f
}

// initSchedule sets, from now, when the interval sync, the path check and
// the next rotation are due, with the file open: a non-empty file left by an
// earlier run is rotated at the end of the period it was last written in.
func (f *File) initSchedule() {
	now := f.now()
	f.lastSync = now
	f.nextCheck = now.Add(f.opts.CheckInterval)
	f.nextRotate = periodEnd(now, f.opts.Rotate)
	if f.size > 0 && f.opts.Rotate != RotateNone {
		// An existing file from an earlier period is rotated by the first
		// write of this one.
		if fi, err := f.file.Stat(); err == nil {
			f.nextRotate = periodEnd(fi.ModTime().In(f.loc), f.opts.Rotate)
		}
	}
}

// startBackground starts the goroutines the options ask for, which Close
// stops (f.quit) and waits for (f.wg): the mill (retention and compression),
// with a first pass over the backups left by earlier runs, and the
// SyncInterval loop.
func (f *File) startBackground() {
	f.quit = make(chan struct{})
	if f.opts.Compress || f.opts.MaxBackups > 0 || f.opts.MaxAge > 0 {
		f.millCh = make(chan struct{}, 1)
		f.millCh <- struct{}{} // process backups left by earlier runs
		f.wg.Add(1)
		go f.mill()
	}
	if f.opts.Sync == SyncInterval {
		tick, stop := f.opts.testTick, func() {}
		if tick == nil {
			t := time.NewTicker(f.opts.SyncInterval)
			tick, stop = t.C, t.Stop
		}
		f.wg.Add(1)
		go f.syncLoop(tick, stop)
	}
}

// openCurrent opens f.path for appending, locks it (one File per path) and
// records its identity and size.
func (f *File) openCurrent() error {
	for attempt := 1; ; attempt++ {
		file, err := f.openFile(f.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, f.perm)
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
		fd := handleOf(file)
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
		f.ident = cur // os.SameFile above loaded its identity (on Windows lazily, from the path)
		f.perm = fi.Mode().Perm()
		f.size = cur.Size()
		f.allocEnd = f.size
		f.cutTo = -1
		f.retrySize = 0 // a new file: size rotation as usual
		return nil
	}
}

// lockFile takes the one-File-per-path lock on fd, the descriptor of f.path.
func (f *File) lockFile(fd handle) error {
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
