package journald

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sendBuffer is the socket send buffer asked for, as sd_journal_send asks:
// the kernel caps it at net.core.wmem_max, and a record larger than the
// buffer takes the memfd path.
const sendBuffer = 8 << 20

// conn is an unconnected datagram socket that sends to the journal's
// address each time, so that a restarted journald (a new socket at the
// same path) is reached without reconnecting.
type conn struct {
	c       *net.UnixConn
	addr    *net.UnixAddr
	timeout time.Duration
}

// dial checks that path is a socket someone listens on and opens conn.
func dial(path string, timeout time.Duration) (*conn, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("journald: no journal socket at %s (is systemd-journald running?)", path)
	case err != nil:
		return nil, fmt.Errorf("journald: %w", err)
	case fi.Mode().Type() != fs.ModeSocket:
		return nil, fmt.Errorf("journald: %s is not a socket", path)
	}
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	probe, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return nil, fmt.Errorf("journald: the journal socket %s does not answer: %w", path, syscallErr(err))
	}
	_ = probe.Close()
	// An empty name binds an autobound abstract address: a local address
	// the journal could answer to, which it never does.
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("journald: opening a socket: %w", err)
	}
	_ = c.SetWriteBuffer(sendBuffer) // best effort: a smaller buffer only sends more records through memfds
	return &conn{c: c, addr: addr, timeout: timeout}, nil
}

// send sends p as one datagram, or, when the kernel refuses a datagram
// that large (EMSGSIZE, or ENOBUFS for want of buffer memory), through
// sendFD. large reports the second.
func (c *conn) send(p []byte) (large bool, err error) {
	if err := c.c.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return false, c.sendErr(err)
	}
	_, _, err = c.c.WriteMsgUnix(p, nil, c.addr)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, syscall.EMSGSIZE) && !errors.Is(err, syscall.ENOBUFS) {
		return false, c.sendErr(err)
	}
	return true, c.sendFD(p)
}

// sendFD sends p the way the journal's protocol takes large entries: in a
// memfd sealed against every change, passed with SCM_RIGHTS in an
// otherwise empty datagram. The journal reads it, then closes it.
func (c *conn) sendFD(p []byte) error {
	fd, err := unix.MemfdCreate("asyncbus-journald", unix.MFD_ALLOW_SEALING|unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "memfd:asyncbus-journald")
	defer f.Close()
	if _, err := f.Write(p); err != nil {
		return err
	}
	const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("sealing the memfd: %w", err)
	}
	if _, _, err := c.c.WriteMsgUnix(nil, unix.UnixRights(int(f.Fd())), c.addr); err != nil {
		return c.sendErr(err)
	}
	return nil
}

// sendErr turns a failed send's error into the short one the handler
// reports after the socket's name: the system's error ("connection
// refused", "no such file or directory" while journald restarts), or a
// timeout naming SendTimeout.
func (c *conn) sendErr(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("send timed out after %v: the journal is not reading its socket", c.timeout)
	case errors.Is(err, net.ErrClosed):
		return errClosed
	}
	return syscallErr(err)
}

// syscallErr is the errno inside err, if any, else err.
func syscallErr(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

func (c *conn) close() error { return c.c.Close() }
