// The file changed underneath: renamed, deleted or truncated by logrotate.

package filesink

import (
	"errors"
	"io/fs"
	"os"
)

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
		if os.SameFile(fi, f.ident) {
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
