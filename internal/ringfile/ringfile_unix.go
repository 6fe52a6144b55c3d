//go:build unix && !aix

package ringfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openRingFile opens (creating it if needed) and locks the ring file and maps
// it. A damaged or foreign file is renamed aside (warn gets a
// *Error) and replaced by a fresh one. The returned file may have a
// capacity other than the one asked for (an existing file keeps its own
// until it has been recovered; see openRing).
func openRingFile(path string, capacity uint64, o *Options) (*File, error) {
	warn := o.Warn
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
				return nil, fmt.Errorf("asyncbus: ring file %s: %w", path, ErrLocked)
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
			return createRing(f, path, capacity, o)
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
		im, err := parseImage(data, o)
		if errors.Is(err, errUninitialized) && isZero(data) {
			// Created, never initialised, nothing in it: initialise in place.
			_ = unix.Munmap(data)
			if err := unix.Ftruncate(fd, 0); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("asyncbus: truncate ring file %s: %w", path, err)
			}
			return createRing(f, path, capacity, o)
		}
		if err != nil {
			_ = unix.Munmap(data)
			quarantine(f, path, err.Error(), warn)
			continue
		}
		return &File{path: path, f: f, data: data, capacity: im.capacity, st: im.st, gen: im.gen, version: im.version, o: o}, nil
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
	warn(&Error{Path: path, Reason: reason + "; starting with a fresh ring file", Aside: aside})
	_ = f.Close()
}

// createRing sizes the empty, locked file f for capacity, maps it and
// writes a fresh header.
func createRing(f *os.File, path string, capacity uint64, o *Options) (*File, error) {
	r := &File{path: path, f: f, capacity: capacity, o: o}
	if err := r.mapSize(capacity); err != nil {
		_ = f.Close()
		return nil, err
	}
	r.initHeader()
	return r, nil
}

// mapSize truncates the file to hold a ring of capacity (the new space reads
// as zero) and maps it.
func (r *File) mapSize(capacity uint64) error {
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
func (r *File) resize(capacity uint64) error {
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
func (r *File) close() {
	if r.data != nil {
		_ = unix.Munmap(r.data)
		r.data = nil
	}
	_ = r.f.Close()
}

// regularConn returns f's raw descriptor if f is a regular file, or nil.
func regularConn(f *os.File) syscall.RawConn {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// FilePosition returns an fstat-based position function for a regular
// file, or nil.
func FilePosition(f *os.File) func() (Position, error) {
	rc := regularConn(f)
	if rc == nil {
		return nil
	}
	return func() (Position, error) {
		var st unix.Stat_t
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
			return Position{}, err
		}
		if serr != nil {
			return Position{}, serr
		}
		return Position{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size}, nil // Dev is not uint64 on every platform
	}
}

// PathPosition stats the regular file at path.
func PathPosition(path string) (Position, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Position{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Position{}, fmt.Errorf("%s is not a regular file", path)
	}
	return Position{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size}, nil // Dev is not uint64 on every platform
}

// FileCutter returns the cutter for an *os.File on a regular file, or nil.
// It cuts only when everything checks out: the descriptor still names the
// file at now (device, inode and size unchanged since recovery measured
// it), the bytes from at to the end are readable (through the descriptor,
// or, for a write-only one, a read-only descriptor of the same inode) and
// accepted by fragment, and the writes will land at the new end: the
// descriptor is O_APPEND, or its offset is the end (it is then moved back
// to at). Otherwise it leaves the file alone.
func FileCutter(f *os.File) Cutter {
	rc := regularConn(f)
	if rc == nil {
		return nil
	}
	return func(at int64, now Position, fragment func([]byte) bool) bool {
		cut := false
		err := rc.Control(func(fd uintptr) { cut = cutFile(int(fd), f.Name(), at, now, fragment) })
		return err == nil && cut
	}
}

// cutFile is FileCutter's work on the descriptor fd.
func cutFile(fd int, name string, at int64, now Position, fragment func([]byte) bool) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || uint64(st.Dev) != now.Dev || st.Ino != now.Ino || st.Size != now.Size || at < 0 || at >= st.Size { // Dev is not uint64 on every platform
		return false
	}
	tail := make([]byte, st.Size-at)
	if !readTail(fd, name, &st, tail, at) || !fragment(tail) {
		return false
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	appending := flags&unix.O_APPEND != 0
	if !appending {
		// Writes go to the offset: only if it is the end can it follow the cut.
		if off, err := unix.Seek(fd, 0, io.SeekCurrent); err != nil || off != st.Size {
			return false
		}
	}
	if unix.Ftruncate(fd, at) != nil {
		return false
	}
	if !appending {
		if _, err := unix.Seek(fd, at, io.SeekStart); err != nil {
			return false
		}
	}
	return true
}

// readTail reads len(b) bytes at off of the file open as fd (whose stat is
// st): with pread on fd, or, when fd is write-only, through a read-only
// descriptor opened by /proc/self/fd (Linux) or by name that is checked to
// be the same inode.
func readTail(fd int, name string, st *unix.Stat_t, b []byte, off int64) bool {
	if preadFull(fd, b, off) {
		return true
	}
	for _, path := range []string{"/proc/self/fd/" + strconv.Itoa(fd), name} {
		if path == "" {
			continue
		}
		rfd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		var rst unix.Stat_t
		ok := unix.Fstat(rfd, &rst) == nil && rst.Dev == st.Dev && rst.Ino == st.Ino
		ok = ok && preadFull(rfd, b, off)
		_ = unix.Close(rfd)
		if ok {
			return true
		}
	}
	return false
}

// FileReader returns the reader for an *os.File on a regular file, or nil.
// It reads the file the descriptor is open on (its identity is the
// output's, however the position was measured): with pread, or through a
// read-only descriptor of the same inode when it is write-only (readTail).
func FileReader(f *os.File) Reader {
	rc := regularConn(f)
	if rc == nil {
		return nil
	}
	return func(_ Position, off int64, b []byte) bool {
		ok := false
		err := rc.Control(func(fd uintptr) {
			var st unix.Stat_t
			ok = unix.Fstat(int(fd), &st) == nil && readTail(int(fd), f.Name(), &st, b, off)
		})
		return err == nil && ok
	}
}

// PathReader returns the reader for the regular file at path (a
// filesink.File's): it reads only if the file there is still the output
// recovery measured (device and inode of now).
func PathReader(path string) Reader {
	return func(now Position, off int64, b []byte) bool {
		// O_NONBLOCK: opening a FIFO put at path since must not block.
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		defer func() { _ = unix.Close(fd) }()
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Dev) != now.Dev || st.Ino != now.Ino { // Dev is not uint64 on every platform
			return false
		}
		return preadFull(fd, b, off)
	}
}

// preadFull reads len(b) bytes at off of fd, in as many reads as it takes;
// false if the file ends first or a read fails.
func preadFull(fd int, b []byte, off int64) bool {
	for len(b) > 0 {
		n, err := unix.Pread(fd, b, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b, off = b[n:], off+int64(n)
	}
	return true
}
