//go:build linux

package bus

import (
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovMax is IOV_MAX on Linux: the most iovecs one writev accepts.
const iovMax = 1024

// useWritev selects writev(2) for *os.File and other syscall.Conn outputs
// (docs/design.md, Batching, says why the defaults are what they are).
var useWritev = true

// writevRegular selects writev(2) for an *os.File on a regular file too.
// Off: a regular file is written by copying the batch into one staging
// buffer and one write(2); pipes, sockets and devices keep writev. Tests
// set it to exercise writev on files.
var writevRegular = false

func detectOutputKind(w io.Writer) outputKind {
	if _, ok := w.(BatchWriter); ok {
		return outputBatch
	}
	if f, ok := w.(*os.File); ok && useWritev && !writevRegular {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return outputCopy
		}
	}
	if sc, ok := w.(syscall.Conn); ok && useWritev {
		if _, err := sc.SyscallConn(); err == nil {
			return outputWritev
		}
	}
	return outputCopy
}

// writevState issues writev through syscall.RawConn, so the runtime's poller
// handles non-blocking descriptors and the fd cannot be closed under us.
type writevState struct {
	rc  syscall.RawConn
	iov []unix.Iovec
	n   int
	err error
	fn  func(fd uintptr) bool // bound once: no closure allocation per call
}

func (s *writevState) init(w io.Writer) {
	s.rc, _ = w.(syscall.Conn).SyscallConn() // detectOutputKind checked the error
	s.iov = make([]unix.Iovec, 0, iovMax)
	s.fn = s.call
}

func (s *writevState) call(fd uintptr) bool {
	for {
		// unsafe: the iovecs point into the ring / side table, kept alive by the
		// drainer's views for the duration of the call.
		n, _, e := unix.Syscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&s.iov[0])), uintptr(len(s.iov)))
		switch e {
		case 0:
			s.n, s.err = int(n), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false // wait until writable (pollable descriptors only)
		default:
			s.n, s.err = 0, e
		}
		return true
	}
}

// step writes up to iovMax records from record idx, byte off, with one writev.
func (s *writevState) step(d *drainer, idx, off int) (int, int, error) {
	views := d.views
	for idx < len(views) && off == len(views[idx]) { // skip empty/completed records
		idx, off = idx+1, 0
	}
	if idx == len(views) {
		return idx, 0, nil
	}
	s.iov = s.iov[:0]
	for i := idx; i < len(views) && len(s.iov) < iovMax; i++ {
		v := views[i]
		if i == idx {
			v = v[off:]
		}
		if len(v) == 0 {
			continue
		}
		var iov unix.Iovec
		iov.Base = &v[0]
		iov.SetLen(len(v))
		s.iov = append(s.iov, iov)
	}
	// Reset first: rc.Write can fail without calling fn (a closed file), and
	// then s.n must not be the previous call's count.
	s.n, s.err = 0, nil
	err := s.rc.Write(s.fn)
	d.b.writeCalls.Add(1) // atomic, row writeCalls
	if err == nil {
		err = s.err
	}
	n := s.n // bytes the last writev reported, also when rc.Write failed after it
	// Advance n bytes from (idx, off).
	for n > 0 && idx < len(views) {
		rem := len(views[idx]) - off
		if n < rem {
			off += n
			break
		}
		n -= rem
		idx, off = idx+1, 0
	}
	for idx < len(views) && off == len(views[idx]) {
		idx, off = idx+1, 0 // completed (or empty) records
	}
	clear(s.iov) // do not keep ring/heap pointers alive
	return idx, off, err
}
