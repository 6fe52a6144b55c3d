package filesink

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// backupLayout is the timestamp in backup names (lumberjack's layout).
const backupLayout = "2006-01-02T15-04-05.000"

const (
	gzExt  = ".gz"
	tmpExt = ".tmp"
)

// rotateLocked moves the current file to a timestamped backup and opens a
// new one, with f.mu held. An empty file is not rotated. If the rename fails
// (an immutable or read-only directory, EACCES, EPERM) the current file
// stays open and in use, and the error is a *renameError.
func (f *File) rotateLocked() error {
	now := f.now()
	f.nextRotate = periodEnd(now, f.opts.Rotate)
	if f.file == nil {
		return f.openCurrent()
	}
	if f.size == 0 {
		return nil
	}
	if f.opts.Sync != SyncNever && f.dirty {
		f.syncOrReport()
	}
	backup := f.backupName(now)
	if err := f.renameCurrent(backup); err != nil {
		return err
	}
	if err := f.openCurrent(); err != nil {
		return err
	}
	f.rotations++
	f.renameFailing = false
	if err := f.ensureSymlink(); err != nil {
		f.pending = append(f.pending, err)
	}
	if f.millCh != nil {
		select {
		case f.millCh <- struct{}{}:
		default: // a pass is already pending; it will see this backup
		}
	}
	return nil
}

// renameCurrent renames the current file to backup and closes it, leaving
// f.file nil for openCurrent. Where the system allows it, the rename happens
// while the file is open (the descriptor follows the inode), so a failed
// rename leaves everything as it was. Where it does not (Windows,
// closeBeforeRename), the file is closed first, which also releases its
// lock for a moment, and reopened if the rename fails; either way a failed
// rename returns a *renameError and the current file stays in use (unless
// reopening it failed too: then a plain error, and no file is open).
func (f *File) renameCurrent(backup string) error {
	if fi, err := f.file.Stat(); err == nil {
		f.perm = fi.Mode().Perm() // the new file gets the mode of this one, chmod included
	}
	renameErr := func(err error) error {
		return fmt.Errorf("filesink: rotate %s to %s: %w", f.path, backup, err)
	}
	if !f.closeBeforeRename {
		if err := f.rename(f.path, backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &renameError{renameErr(err)}
		}
		if err := f.closeCurrent(); err != nil {
			f.pending = append(f.pending, err)
		}
		return nil
	}
	if err := f.closeCurrent(); err != nil {
		f.pending = append(f.pending, err)
	}
	if err := f.rename(f.path, backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if oerr := f.openCurrent(); oerr != nil {
			// Not a *renameError: no file is open, the write fails and the
			// next one opens the path again.
			return errors.Join(renameErr(err), oerr)
		}
		return &renameError{renameErr(err)}
	}
	return nil
}

// renameError is a rotation that failed at the rename: the current file is
// still open and takes the records.
type renameError struct{ err error }

func (e *renameError) Error() string { return e.err.Error() }
func (e *renameError) Unwrap() error { return e.err }

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

// backupName is a free backup path for a rotation at t.
func (f *File) backupName(t time.Time) string {
	stem := f.prefix + t.Format(backupLayout)
	for i := 0; ; i++ {
		name := stem
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		name = filepath.Join(f.dir, name+f.ext)
		if !exists(name) && !exists(name+gzExt) {
			return name
		}
	}
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// backup is one rotated file, plain, compressed or (after a crash during
// compression) both.
type backup struct {
	stem      string // full path without ".gz"
	t         time.Time
	seq       int
	plain, gz bool
}

// parseBackupName reports whether name (without ".gz") is one of f's
// backups, <prefix><time>[-N]<ext>, and returns its time and sequence.
func (f *File) parseBackupName(name string) (time.Time, int, bool) {
	if !strings.HasPrefix(name, f.prefix) || !strings.HasSuffix(name, f.ext) {
		return time.Time{}, 0, false
	}
	mid := name[len(f.prefix) : len(name)-len(f.ext)]
	if len(mid) < len(backupLayout) {
		return time.Time{}, 0, false
	}
	t, err := time.ParseInLocation(backupLayout, mid[:len(backupLayout)], f.loc)
	if err != nil {
		return time.Time{}, 0, false
	}
	seq := 0
	if rest := mid[len(backupLayout):]; rest != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(rest, "-"))
		if err != nil || !strings.HasPrefix(rest, "-") || n < 1 {
			return time.Time{}, 0, false
		}
		seq = n
	}
	return t, seq, true
}

// backups lists the rotated files of f, newest first.
func (f *File) backups() ([]*backup, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, err
	}
	byStem := map[string]*backup{}
	var list []*backup
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		compressed := strings.HasSuffix(name, gzExt)
		name = strings.TrimSuffix(name, gzExt)
		t, seq, ok := f.parseBackupName(name)
		if !ok {
			continue
		}
		stem := filepath.Join(f.dir, name)
		b := byStem[stem]
		if b == nil {
			b = &backup{stem: stem, t: t, seq: seq}
			byStem[stem] = b
			list = append(list, b)
		}
		if compressed {
			b.gz = true
		} else {
			b.plain = true
		}
	}
	slices.SortFunc(list, func(a, b *backup) int {
		if c := b.t.Compare(a.t); c != 0 {
			return c
		}
		return b.seq - a.seq
	})
	return list, nil
}

// mill applies retention and compression whenever backups change, and once
// more on Close if a pass is pending.
func (f *File) mill() {
	defer f.wg.Done()
	for {
		select {
		case <-f.millCh:
			f.millOnce()
		case <-f.quit:
			select {
			case <-f.millCh:
				f.millOnce()
			default:
			}
			return
		}
	}
}

func (f *File) millOnce() {
	list, err := f.backups()
	if err != nil {
		f.report(fmt.Errorf("filesink: list backups in %s: %w", f.dir, err))
		return
	}
	cutoff := time.Time{}
	if f.opts.MaxAge > 0 {
		cutoff = f.now().Add(-f.opts.MaxAge)
	}
	for i, b := range list {
		if (f.opts.MaxBackups > 0 && i >= f.opts.MaxBackups) || (!cutoff.IsZero() && b.t.Before(cutoff)) {
			for _, name := range b.names() {
				if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
					f.report(fmt.Errorf("filesink: remove old backup: %w", err))
				}
			}
			continue
		}
		if !f.opts.Compress || !b.plain {
			continue
		}
		if b.gz {
			// A crash came after the atomic rename: the .gz is complete.
			if err := os.Remove(b.stem); err != nil && !errors.Is(err, fs.ErrNotExist) {
				f.report(fmt.Errorf("filesink: remove compressed backup: %w", err))
			}
			continue
		}
		if err := compress(b.stem); err != nil {
			f.report(fmt.Errorf("filesink: compress %s: %w", b.stem, err))
		}
	}
}

func (b *backup) names() []string {
	var n []string
	if b.plain {
		n = append(n, b.stem)
	}
	if b.gz {
		n = append(n, b.stem+gzExt)
	}
	return n
}

// compress gzips src to src.gz through src.gz.tmp, so the .gz appears
// atomically and complete, then removes src (after closing it: Windows
// cannot remove a file that is open).
func compress(src string) (err error) {
	if err := gzipTo(src, src+gzExt); err != nil {
		return err
	}
	return os.Remove(src)
}

// gzipTo writes the gzip of src to dst through dst.tmp.
func gzipTo(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	tmp := dst + tmpExt
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = out.Close()
			_ = os.Remove(tmp)
		}
	}()
	zw := gzip.NewWriter(out)
	if _, err = io.Copy(zw, in); err != nil {
		return err
	}
	if err = zw.Close(); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	if err = out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// removeTemps deletes temporary compression files left by a crash.
func (f *File) removeTemps() {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		f.report(fmt.Errorf("filesink: list %s: %w", f.dir, err))
		return
	}
	for _, e := range entries {
		name := e.Name()
		// Only this file's own backups: another sink in the same directory
		// (app.json next to app.log, app-worker.log) may be compressing.
		if _, _, ok := f.parseBackupName(strings.TrimSuffix(name, gzExt+tmpExt)); ok && strings.HasSuffix(name, gzExt+tmpExt) {
			if err := os.Remove(filepath.Join(f.dir, name)); err != nil {
				f.report(fmt.Errorf("filesink: remove temporary file: %w", err))
			}
		}
	}
}

// ensureSymlink points opts.Symlink at the log file, replacing any other
// link atomically (a temporary link renamed over it).
func (f *File) ensureSymlink() error {
	if f.opts.Symlink == "" {
		return nil
	}
	target, err := filepath.Abs(f.path)
	if err != nil {
		return fmt.Errorf("filesink: symlink: %w", err)
	}
	if cur, err := os.Readlink(f.opts.Symlink); err == nil && cur == target {
		return nil
	}
	tmp := f.opts.Symlink + tmpExt + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fileErr("create symlink", tmp, err)
	}
	if err := os.Rename(tmp, f.opts.Symlink); err != nil {
		_ = os.Remove(tmp)
		return fileErr("replace symlink", f.opts.Symlink, err)
	}
	return nil
}
