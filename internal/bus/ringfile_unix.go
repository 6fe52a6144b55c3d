//go:build unix

package bus

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openRingFile opens (creating it if needed) and locks the ring file and maps
// it. A damaged or foreign file is renamed aside (warn gets a
// *RingFileError) and replaced by a fresh one. The returned file may have a
// capacity other than the one asked for (an existing file keeps its own
// until it has been recovered; see openRing).
func openRingFile(path string, capacity uint64, warn func(error)) (*ringFile, error) {
	for attempt := 0; ; attempt++ {
		if attempt == 8 {
			return nil, fmt.Errorf("asyncbus: ring file %s keeps being replaced while opening it", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("asyncbus: ring file: %w", err)
		}
		fd := int(f.Fd())
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("asyncbus: ring file %s: %w", path, ErrRingLocked)
			}
			return nil, fmt.Errorf("asyncbus: lock ring file %s: %w", path, err)
		}
		// The lock is on the inode we opened; if the path was renamed aside or
		// replaced in between (another process quarantining it), start over.
		var fst, pst unix.Stat_t
		if err := unix.Fstat(fd, &fst); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("asyncbus: stat ring file %s: %w", path, err)
		}
		if err := unix.Stat(path, &pst); err != nil || pst.Dev != fst.Dev || pst.Ino != fst.Ino {
			_ = f.Close()
			continue
		}
		size := fst.Size
		if size == 0 {
			return createRing(f, path, capacity)
		}
		if size < ringHeaderSize || size > ringHeaderSize+MaxCapacity {
			quarantine(f, path, fmt.Sprintf("file is %d bytes: not a ring file", size), warn)
			continue
		}
		data, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("asyncbus: map ring file %s: %w", path, err)
		}
		im, err := parseImage(data)
		if errors.Is(err, errUninitialized) && isZero(data) {
			// Created, never initialised, nothing in it: initialise in place.
			_ = unix.Munmap(data)
			if err := unix.Ftruncate(fd, 0); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("asyncbus: truncate ring file %s: %w", path, err)
			}
			return createRing(f, path, capacity)
		}
		if err != nil {
			_ = unix.Munmap(data)
			quarantine(f, path, err.Error(), warn)
			continue
		}
		return &ringFile{path: path, f: f, data: data, capacity: im.capacity, st: im.st, gen: im.gen}, nil
	}
}

// quarantine renames the (locked) file at path aside, reports it and closes
// f (releasing the lock on the renamed file).
func quarantine(f *os.File, path, reason string, warn func(error)) {
	aside := asideName(path)
	if err := os.Rename(path, aside); err != nil {
		// Cannot rename: remove it rather than replay garbage or fail forever.
		reason += "; rename failed (" + err.Error() + "), removed it"
		aside = ""
		_ = os.Remove(path)
	}
	warn(&RingFileError{Path: path, Reason: reason + "; starting with a fresh ring file", Aside: aside})
	_ = f.Close()
}

// createRing sizes the empty, locked file f for capacity, maps it and
// writes a fresh header.
func createRing(f *os.File, path string, capacity uint64) (*ringFile, error) {
	r := &ringFile{path: path, f: f, capacity: capacity}
	if err := r.mapSize(capacity); err != nil {
		_ = f.Close()
		return nil, err
	}
	r.initHeader()
	return r, nil
}

// mapSize truncates the file to hold a ring of capacity (the new space reads
// as zero) and maps it.
func (r *ringFile) mapSize(capacity uint64) error {
	fd := int(r.f.Fd())
	size := int64(ringHeaderSize + capacity)
	if err := unix.Ftruncate(fd, size); err != nil {
		return fmt.Errorf("asyncbus: size ring file %s: %w", r.path, err)
	}
	data, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("asyncbus: map ring file %s: %w", r.path, err)
	}
	r.data, r.capacity = data, capacity
	return nil
}

// resize gives the (recovered, reset, hence empty) ring a new capacity. A
// crash in between leaves a header that does not match the file size: the
// next start renames that file aside, but the ring was empty, so nothing is
// lost.
func (r *ringFile) resize(capacity uint64) error {
	if err := unix.Munmap(r.data); err != nil {
		return fmt.Errorf("asyncbus: unmap ring file %s: %w", r.path, err)
	}
	r.data = nil
	if err := r.mapSize(capacity); err != nil {
		return err
	}
	r.initHeader()
	return nil
}

// close unmaps the file and closes it, which releases the lock.
func (r *ringFile) close() {
	if r.data != nil {
		_ = unix.Munmap(r.data)
		r.data = nil
	}
	_ = r.f.Close()
}

// filePosition returns an fstat-based position function for a regular
// file, or nil.
func filePosition(f *os.File) func() (SinkPosition, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return func() (SinkPosition, error) {
		var st unix.Stat_t
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
			return SinkPosition{}, err
		}
		if serr != nil {
			return SinkPosition{}, serr
		}
		return SinkPosition{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size}, nil // Dev is not uint64 on every platform
	}
}

// pathPosition stats the regular file at path.
func pathPosition(path string) (SinkPosition, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return SinkPosition{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return SinkPosition{}, fmt.Errorf("%s is not a regular file", path)
	}
	return SinkPosition{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size}, nil // Dev is not uint64 on every platform
}
