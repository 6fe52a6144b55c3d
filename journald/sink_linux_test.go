package journald

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/asyncbus/asyncbus"
)

// errorLog collects a handler's OnError reports.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

func TestHandlerSendsEntries(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path, Identifier: "checkout"})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(&asyncbus.Options{Level: asyncbus.LevelTrace})
	require.NoError(t, err)
	log := slog.New(h)
	log.Info("order placed", "order", 1234, slog.Group("user", "id", "u-17"))
	log.With("shard", 3).WithGroup("db").Warn("slow\nquery", "ms", 250)
	log.Log(t.Context(), asyncbus.LevelTrace, "trace")
	log.Error("failed", "err", errors.New("disk full"))
	require.NoError(t, h.Close())

	got := j.drain(t)
	require.Len(t, got, 4)
	assert.Equal(t, "PRIORITY=6\nMESSAGE=order placed\nSYSLOG_IDENTIFIER=checkout\nORDER=1234\nUSER_ID=u-17\n", string(got[0].Raw))
	assert.Equal(t, []field{
		{Name: "PRIORITY", Value: "4"},
		{Name: "MESSAGE", Value: "slow\nquery", Binary: true},
		{Name: "SYSLOG_IDENTIFIER", Value: "checkout"},
		{Name: "SHARD", Value: "3"},
		{Name: "DB_MS", Value: "250"},
	}, got[1].Fields)
	assert.Equal(t, []string{"7"}, get(got[2].Fields, "PRIORITY"))
	assert.Equal(t, []string{"3"}, get(got[3].Fields, "PRIORITY"))
	assert.Equal(t, []string{"disk full"}, get(got[3].Fields, "ERR"))
	for _, r := range got {
		assert.False(t, r.ViaFD)
	}

	st := h.Stats()
	assert.Equal(t, uint64(4), st.Written)
	assert.Zero(t, st.Failed)
	assert.Equal(t, Stats{Sent: 4}, s.Stats())
}

// The flight recorder keeps records in the handler's own format, not the
// journal's fields: NewHandler refuses it before a handler is made.
func TestNewHandlerRefusesFlightRecorder(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(&asyncbus.Options{Features: asyncbus.FeatureOptions{FlightRecorder: &asyncbus.FlightRecorder{}}})
	require.ErrorContains(t, err, "FlightRecorder")
	assert.Nil(t, h)
}

func TestAddSourceWritesCodeFields(t *testing.T) {
	j := startJournal(t)
	h, err := NewHandler(Options{Socket: j.path}, &asyncbus.Options{AddSource: true})
	require.NoError(t, err)
	slog.New(h).Info("here")
	require.NoError(t, h.Close())
	got := j.drain(t)
	require.Len(t, got, 1)
	fs := got[0].Fields
	require.Len(t, get(fs, "CODE_FILE"), 1)
	assert.True(t, strings.HasSuffix(get(fs, "CODE_FILE")[0], "/journald/sink_linux_test.go"))
	assert.Equal(t, []string{"github.com/asyncbus/asyncbus/journald.TestAddSourceWritesCodeFields"}, get(fs, "CODE_FUNC"))
	assert.Len(t, get(fs, "CODE_LINE"), 1)
	// The default identifier is the program's name.
	assert.Equal(t, []string{filepath.Base(os.Args[0])}, get(fs, "SYSLOG_IDENTIFIER"))
}

// shrinkSendBuffer makes s's socket refuse datagrams above about n bytes
// (EMSGSIZE), as the kernel's default buffer does for records of a few
// hundred KiB.
func shrinkSendBuffer(t *testing.T, s *Sink, n int) {
	t.Helper()
	require.NoError(t, s.conn.c.SetWriteBuffer(n))
}

func TestLargeRecordGoesThroughSealedMemfd(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path, Identifier: "big"})
	require.NoError(t, err)
	defer s.Close()
	shrinkSendBuffer(t, s, 4096)
	h, err := s.NewHandler(nil)
	require.NoError(t, err)
	big := strings.Repeat("0123456789abcdef", 64<<10/16) // 64 KiB: far above the buffer
	multi := strings.Repeat("line\n", 20000)             // 100 KiB, binary form
	slog.New(h).Info("small")                            // still a datagram
	slog.New(h).Info(big, "blob", multi)                 // too large: memfd
	slog.New(h).Info("small again", "n", 2)              // a datagram again
	require.NoError(t, h.Close())

	got := j.drain(t)
	require.Len(t, got, 3)
	assert.False(t, got[0].ViaFD)
	assert.False(t, got[2].ViaFD)
	r := got[1]
	require.True(t, r.ViaFD)
	const allSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	assert.Equal(t, allSeals, r.Seals&allSeals, "the memfd must be sealed as journald requires")
	assert.Equal(t, []field{
		{Name: "PRIORITY", Value: "6"},
		{Name: "MESSAGE", Value: big},
		{Name: "SYSLOG_IDENTIFIER", Value: "big"},
		{Name: "BLOB", Value: multi, Binary: true},
	}, r.Fields)
	assert.Equal(t, Stats{Sent: 3, Large: 1}, s.Stats())
	assert.Equal(t, uint64(3), h.Stats().Written)
}

func TestForeignRecordSentAsMessage(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path, Identifier: "app"})
	require.NoError(t, err)
	defer s.Close()
	n, err := s.WriteBatch([][]byte{
		[]byte(`{"level":"WARN","msg":"asyncbus: records dropped","dropped":3}` + "\n"),
		{},
		[]byte("two\nlines\n"),
	})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	got := j.drain(t)
	require.Len(t, got, 2)
	assert.Equal(t, "PRIORITY=4\nMESSAGE={\"level\":\"WARN\",\"msg\":\"asyncbus: records dropped\",\"dropped\":3}\nSYSLOG_IDENTIFIER=app\n", string(got[0].Raw))
	assert.Equal(t, []string{"two\nlines"}, get(got[1].Fields, "MESSAGE"))
	assert.Equal(t, Stats{Sent: 2, Foreign: 2}, s.Stats())
}

// TestSinkPrintsItsSocket: %v of a *Sink names the journal
// socket instead of dumping its fields.
func TestSinkPrintsItsSocket(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	assert.Equal(t, "journald.Sink("+j.path+")", fmt.Sprintf("%v", s))
}

func TestNewSinkWithoutJournal(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	_, err := NewHandler(Options{Socket: missing}, nil)
	require.Error(t, err)
	assert.Equal(t, "journald: no journal socket at "+missing+" (is systemd-journald running?)", err.Error())

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = NewSink(Options{Socket: file})
	assert.EqualError(t, err, "journald: "+file+" is not a socket")

	// A socket file nobody listens on any more.
	stale := filepath.Join(dir, "stale")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: stale, Net: "unixgram"})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = NewSink(Options{Socket: stale})
	assert.EqualError(t, err, "journald: the journal socket "+stale+" does not answer: connection refused")
}

func TestFailedSendsCountedAndReported(t *testing.T) {
	j := startJournal(t)
	var errs errorLog
	h, err := NewHandler(Options{Socket: j.path}, &asyncbus.Options{OnError: errs.add, Retry: asyncbus.RetryOptions{Attempts: 2}})
	require.NoError(t, err)
	log := slog.New(h)
	log.Info("before")
	require.NoError(t, h.Flush())
	j.stop() // journald goes away
	log.Info("lost 1")
	log.Info("lost 2")
	err = h.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "asyncbus: write journald "+j.path+": no such file or directory (2 records failed)")

	st := h.Stats()
	assert.Equal(t, uint64(1), st.Written)
	assert.Equal(t, uint64(2), st.Failed)
	reports := errs.all()
	require.NotEmpty(t, reports)
	assert.Contains(t, reports[0].Error(), "asyncbus: write journald "+j.path+": no such file or directory")
	for _, r := range reports[1:] {
		// Repeats of the error are counted in one later report, not each.
		assert.Contains(t, r.Error(), "suppressed")
	}
}

func TestJournalRestartIsReached(t *testing.T) {
	j := startJournal(t)
	h, err := NewHandler(Options{Socket: j.path}, nil)
	require.NoError(t, err)
	slog.New(h).Info("first")
	require.NoError(t, h.Flush())
	require.Len(t, j.drain(t), 1)
	j.stop()
	j2 := startJournalAt(t, j.path) // a new socket at the same path
	slog.New(h).Info("second")
	require.NoError(t, h.Close())
	got := j2.drain(t)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"second"}, get(got[0].Fields, "MESSAGE"))
}

func TestSendTimesOutWhenJournalIsNotReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "socket")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	defer c.Close() // never read: its queue fills
	s, err := NewSink(Options{Socket: path, SendTimeout: 20 * time.Millisecond})
	require.NoError(t, err)
	defer s.Close()
	rec := append([]byte{recordTag}, "MESSAGE=x\n"...)
	var sendErr error
	for i := 0; i < 1<<16 && sendErr == nil; i++ {
		_, sendErr = s.WriteBatch([][]byte{rec})
	}
	require.Error(t, sendErr, "the queue of a socket nobody reads never filled")
	assert.EqualError(t, sendErr, "send timed out after 20ms: the journal is not reading its socket")
}

func TestSendAfterClose(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	n, err := s.Write(append([]byte{recordTag}, "MESSAGE=x\n"...))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, errClosed)
}
