package journald

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// received is one datagram the stand-in journal got.
type received struct {
	Raw    []byte  // the entry's bytes: the datagram, or the memfd's contents
	Fields []field // Raw parsed
	ViaFD  bool    // sent as a memfd with SCM_RIGHTS
	Seals  int     // the memfd's seals (F_GET_SEALS)
	Err    error   // what was wrong with it
}

// journal is a stand-in for journald's native socket: it receives
// datagrams, takes a passed memfd's contents as journald does, and parses
// every entry with parseEntry.
type journal struct {
	path string
	conn *net.UnixConn
	got  chan received
	done chan struct{}
}

// startJournal listens on a socket in a test directory, until the test ends.
func startJournal(t *testing.T) *journal {
	t.Helper()
	return startJournalAt(t, filepath.Join(t.TempDir(), "socket"))
}

func startJournalAt(t *testing.T, path string) *journal {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	j := &journal{path: path, conn: c, got: make(chan received, 4096), done: make(chan struct{})}
	go j.serve()
	t.Cleanup(j.stop)
	return j
}

// stop closes the socket and removes its file, as a stopped journald does.
func (j *journal) stop() {
	_ = j.conn.Close()
	<-j.done
	_ = os.Remove(j.path)
}

func (j *journal) serve() {
	defer close(j.done)
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := j.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			return // closed
		}
		r := received{Raw: append([]byte(nil), buf[:n]...)}
		switch {
		case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			r.Err = errors.New("datagram truncated")
		case oobn > 0:
			r = readPassedFD(oob[:oobn], n)
		}
		if r.Err == nil {
			r.Fields, r.Err = parseEntry(r.Raw)
		}
		j.got <- r
	}
}

// readPassedFD reads the entry in the one descriptor passed in oob, as
// journald does: the datagram must be empty, the descriptor a memfd
// sealed against every change.
func readPassedFD(oob []byte, n int) received {
	r := received{ViaFD: true}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return received{ViaFD: true, Err: errors.New("no single control message")}
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return received{ViaFD: true, Err: errors.New("no single passed descriptor")}
	}
	f := os.NewFile(uintptr(fds[0]), "passed")
	defer f.Close()
	if n != 0 {
		r.Err = errors.New("a descriptor came with a payload")
		return r
	}
	if r.Seals, err = unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0); err != nil {
		r.Err = err
		return r
	}
	fi, err := f.Stat()
	if err != nil {
		r.Err = err
		return r
	}
	r.Raw = make([]byte, fi.Size())
	_, r.Err = f.ReadAt(r.Raw, 0) // the sender's offset is shared: read from 0
	return r
}

// sentinel is the entry drain sends to mark the end of what came before.
const sentinel = "TEST_SENTINEL=1\n"

// drain returns every entry the journal received before this call, in
// order: it sends a sentinel datagram of its own and collects entries
// until it comes back (one socket's queue is first in, first out, and
// every send before the call was queued before the sentinel's).
func (j *journal) drain(t *testing.T) []received {
	t.Helper()
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: j.path, Net: "unixgram"})
	require.NoError(t, err)
	_, err = c.Write([]byte(sentinel))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	var rs []received
	for {
		select {
		case r := <-j.got:
			if string(r.Raw) == sentinel {
				return rs
			}
			require.NoError(t, r.Err, "entry %q", r.Raw)
			rs = append(rs, r)
		case <-time.After(10 * time.Second):
			t.Fatal("the sentinel did not come back")
		}
	}
}
