package bus

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeRoom returns a check that a pipe has room for n bytes now: its
// buffer's size (F_GETPIPE_SZ, read once) less the bytes its reader has
// not taken yet (FIONREAD). A write that fits does not block, unless
// another writer fills the pipe in between; the breaker then stops later
// write-throughs.
func pipeRoom(f *os.File) directCheck {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	p := &pipeCheck{}
	if err := rc.Control(func(fd uintptr) {
		p.size, p.err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	}); err != nil || p.err != nil || p.size <= 0 {
		return nil
	}
	p.rc, p.fn = rc, p.unread
	return p.room
}

// pipeCheck is pipeRoom's state, used by one write-through at a time
// (they hold wmu).
type pipeCheck struct {
	rc     interface{ Control(func(uintptr)) error }
	size   int
	queued int
	err    error
	fn     func(uintptr) // bound once: no closure allocation per check
}

func (p *pipeCheck) unread(fd uintptr) {
	p.queued, p.err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // TIOCINQ is FIONREAD
}

func (p *pipeCheck) room(n int) bool {
	if err := p.rc.Control(p.fn); err != nil || p.err != nil {
		return false
	}
	return p.size-p.queued >= n
}
