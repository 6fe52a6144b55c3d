package filesink

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// iovMax is IOV_MAX on Linux: the most slices one writev(2) accepts.
const iovMax = 1024

// maxZeroWrites bounds retries of writes that make no progress and report
// no error (or EINTR), so a misbehaving file system cannot make us spin.
const maxZeroWrites = 3

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
// a write stopped inside (appendEnd: just after the n bytes the write
// appended). continued says the record began in
// earlier writes, which ended at prev; its bytes are contiguous, and the
// offset is known, only if this write started there. -1: unknown (another
// writer appended in between, or the offset could not be read).
func (f *File) tornEndAfter(prev int64, n int, continued bool) int64 {
	pos, err := appendEnd(f.fd, f.file)
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
