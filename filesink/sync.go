package filesink

import (
	"errors"
	"fmt"
	"time"
)

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
