//go:build linux

package writev

import (
	"io"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Max is IOV_MAX on Linux: the most iovecs one writev accepts.
const Max = 1024

// Writer issues writev through syscall.RawConn, so the runtime's poller
// handles non-blocking descriptors and the fd cannot be closed under us.
type Writer struct {
	rc  syscall.RawConn
	iov []unix.Iovec
	n   int
	err error
	fn  func(fd uintptr) bool // bound once: no closure allocation per call
}

// New returns a Writer for w, or nil if w is not a syscall.Conn whose raw
// connection is available.
func New(w io.Writer) *Writer {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &Writer{rc: rc, iov: make([]unix.Iovec, 0, Max)}
	s.fn = s.call
	return s
}

func (s *Writer) call(fd uintptr) bool {
	for {
		// unsafe: the iovecs point into the caller's views, which it keeps
		// alive for the duration of the call.
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

// Write writes up to Max views from views[idx][off:] on, with one writev.
// It returns the view and the offset in it where the output stopped
// (len(views), 0 once all are written), whether it made the call (not when
// only empty or completed views remain), and the call's error.
func (s *Writer) Write(views [][]byte, idx, off int) (int, int, bool, error) {
	for idx < len(views) && off == len(views[idx]) { // skip empty/completed records
		idx, off = idx+1, 0
	}
	if idx == len(views) {
		return idx, 0, false, nil
	}
	s.iov = s.iov[:0]
	for i := idx; i < len(views) && len(s.iov) < Max; i++ {
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
	clear(s.iov) // do not keep the views' memory alive
	return idx, off, true, err
}
