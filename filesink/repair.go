package filesink

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

// TailRepair describes a torn tail that Open removed: the file did not end
// in a newline (the process died in the middle of a write), so the bytes
// after the last newline were moved to SideFile and the log was truncated to
// Offset. It is also the error passed to Options.OnError for the repair.
type TailRepair struct {
	// Path is the repaired log file.
	Path string
	// Offset is the new size of the log: the end of its last whole line.
	Offset int64
	// Fragment is the number of bytes moved out.
	Fragment int64
	// SideFile holds the fragment, next to the log ("" once Replayed).
	SideFile string
	// Replayed is set when the fragment was the beginning of a record that
	// the asyncbus durable ring then wrote again, whole (see
	// File.SettleTornTail): nothing was lost, the side file was removed and
	// nothing was reported.
	Replayed bool
}

// Error implements error.
func (r *TailRepair) Error() string {
	return fmt.Sprintf("filesink: %s ended in a torn record: moved its last %d bytes to %s and truncated it to %d bytes",
		r.Path, r.Fragment, r.SideFile, r.Offset)
}

// repairChunk is how far back each read looks for the last newline.
const repairChunk = 64 << 10

// repairTail performs the torn-tail repair on the freshly opened file.
func (f *File) repairTail() error {
	if f.size == 0 {
		return nil
	}
	var last [1]byte
	if _, err := f.file.ReadAt(last[:], f.size-1); err != nil {
		return fileErr("read", f.path, err)
	}
	if last[0] == '\n' {
		return nil
	}
	cut, err := lastNewlineEnd(f.file, f.size)
	if err != nil {
		return fileErr("read", f.path, err)
	}
	side, err := f.saveFragment(cut)
	if err != nil {
		return err
	}
	if err := f.truncate(f.fd, cut); err != nil {
		return fmt.Errorf("filesink: truncate torn tail of %s (fragment saved in %s): %w", f.path, side, err)
	}
	if err := f.datasync(f.fd); err != nil {
		return fmt.Errorf("filesink: sync %s after repair: %w", f.path, err)
	}
	f.repair = &TailRepair{Path: f.path, Offset: cut, Fragment: f.size - cut, SideFile: side}
	f.size, f.allocEnd = cut, cut
	return nil
}

// lastNewlineEnd is the offset just after the last '\n' before size, or 0.
func lastNewlineEnd(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, repairChunk)
	for end := size; end > 0; {
		start := max(end-repairChunk, 0)
		b := buf[:end-start]
		if _, err := r.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// saveFragment copies [cut, size) to a new, synced side file and returns
// its name.
func (f *File) saveFragment(cut int64) (string, error) {
	stem := f.path + ".torn-" + f.now().Format(backupLayout)
	for i := 0; ; i++ {
		name := stem
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.opts.Perm)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", fileErr("create torn-tail side file", name, err)
		}
		_, err = io.Copy(out, io.NewSectionReader(f.file, cut, f.size-cut))
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(name)
			return "", fileErr("write torn-tail side file", name, err)
		}
		return name, nil
	}
}

// SettleTornTail is called by the asyncbus bus before it first writes to the
// File (and by the File itself at its first Write, WriteBatch, Sync, Rotate
// or Close): the report of a torn-tail repair that Open made is held until
// then. rec is the record that a durable ring's recovery is about to write
// again, whole, because the crash interrupted its write (nil if there is
// none). If the fragment Open set aside is the beginning of rec, the record
// is not lost: the side file is removed, Repaired().Replayed is set and
// nothing is reported. Otherwise the *TailRepair goes to Options.OnError
// now. Only the first call has an effect.
func (f *File) SettleTornTail(rec []byte) {
	if !f.repairDue.CompareAndSwap(true, false) {
		return // nothing held, or settled already
	}
	f.mu.Lock()
	r := f.repair
	replayed := false
	if rec != nil && r.Fragment < int64(len(rec)) {
		frag, err := os.ReadFile(r.SideFile)
		replayed = err == nil && int64(len(frag)) == r.Fragment && bytes.HasPrefix(rec, frag)
		if replayed {
			settled := *r // a new value: a TailRepair handed out never changes
			settled.Replayed = true
			if os.Remove(r.SideFile) == nil {
				settled.SideFile = ""
			}
			f.repair = &settled
		}
	}
	f.mu.Unlock()
	if !replayed {
		f.emit(r) // once, not rate-limited
	}
}

// settleRepair reports a held torn-tail repair at the File's first use.
func (f *File) settleRepair() {
	if f.repairDue.Load() { // atomic: one load per call while nothing is held
		f.SettleTornTail(nil)
	}
}
