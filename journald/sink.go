package journald

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// DefaultSocket is the journal's native-protocol socket.
const DefaultSocket = "/run/systemd/journal/socket"

// DefaultSendTimeout is how long one send waits for room in the journal's
// socket by default.
const DefaultSendTimeout = time.Second

// Options configures a Sink. The zero value sends to DefaultSocket under
// the program's name.
type Options struct {
	// Socket is the path of the journal's socket; empty means DefaultSocket.
	Socket string
	// Identifier is every record's SYSLOG_IDENTIFIER (journalctl -t);
	// empty means the program's name, the base name of os.Args[0].
	Identifier string
	// SendTimeout bounds each send while the journal is not reading (its
	// socket's queue is full); zero means DefaultSendTimeout. A send that
	// times out fails, and the handler retries it as any failed write.
	SendTimeout time.Duration
}

// Stats are a Sink's counters.
type Stats struct {
	Sent    uint64 // records sent, Large and Foreign included
	Large   uint64 // records sent through a sealed memfd, too large for one datagram
	Foreign uint64 // records not encoded by this package (drop markers without Sequence), sent with their text as MESSAGE
}

// Sink is an io.Writer with a WriteBatch method (the batch writer described
// in the asyncbus package documentation, "Writing an output") that sends
// each record, encoded by this package's handler, to the journal as one
// datagram, or as a sealed memfd passed over the socket when it is too
// large for one. Other records written to it (an asyncbus drop marker,
// lines of a text handler) are each sent at priority 4 (warning) with
// their text, less its final newline, as MESSAGE.
type Sink struct {
	path       string
	header     []byte // SYSLOG_IDENTIFIER field, encoded once
	identifier string

	mu      sync.Mutex // serialises sends: the drainer, Write by other users
	conn    *conn      // the platform's socket (sink_linux.go)
	foreign []byte     // a foreign record's datagram, reused

	// Counters: atomic because Stats reads them from any goroutine while
	// sends add; each is independent, so no ordering is needed.
	sent, large, foreignN atomic.Uint64
}

var (
	_ io.Writer            = (*Sink)(nil)
	_ asyncbus.BatchWriter = (*Sink)(nil)
)

// NewSink checks that the journal's socket exists and answers, and
// returns a Sink sending to it. It fails with an error naming the socket
// when there is none (systemd-journald is not running, or this is a
// container without it), and on other systems than Linux with an error
// naming the system.
func NewSink(o Options) (*Sink, error) {
	if o.Socket == "" {
		o.Socket = DefaultSocket
	}
	if o.Identifier == "" {
		o.Identifier = filepath.Base(os.Args[0])
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultSendTimeout
	}
	c, err := dial(o.Socket, o.SendTimeout)
	if err != nil {
		return nil, err
	}
	return &Sink{
		path:       o.Socket,
		header:     appendField(nil, "SYSLOG_IDENTIFIER", o.Identifier),
		identifier: o.Identifier,
		conn:       c,
	}, nil
}

// NewHandler returns an asyncbus handler that sends its records to the
// journal described by o (see NewSink). opts are the handler's options as
// for asyncbus.Open, which reports invalid ones; Format, Color and
// TraceFatalNames do not apply (the handler's drop marker alone is written
// in Format, unless Features.Sequence is set, which writes the numbers and
// the marker as fields: see the package documentation), AddSource writes
// the CODE_* fields, a Named handler's name
// is the field mapped from LoggerKey (LOGGER by default), and ReplaceAttr
// sees every attribute (the logger name and Context fields included), not
// the fields this package writes itself (PRIORITY, MESSAGE, ...).
// FlightRecorder is refused (not supported).
//
// The handler's Close does not close the socket, which is closed when the
// handler is no longer reachable; use NewSink, Sink.NewHandler and
// Sink.Close to close it at a point of your choosing.
func NewHandler(o Options, opts *asyncbus.Options) (*asyncbus.Handler, error) {
	s, err := NewSink(o)
	if err != nil {
		return nil, err
	}
	return s.NewHandler(opts)
}

// NewHandler returns an asyncbus handler writing to s (see the package
// function NewHandler). Use one handler per Sink.
func (s *Sink) NewHandler(opts *asyncbus.Options) (*asyncbus.Handler, error) {
	var o asyncbus.Options
	if opts != nil {
		o = *opts
	}
	return asyncbus.OpenWithEncoder(s, newEncoder(s.identifier, o.AddSource, o.Encoding.LoggerKey, o.ReplaceAttr), opts)
}

// Name names the output in the handler's error reports.
func (s *Sink) Name() string { return "journald " + s.path }

// String returns "journald.Sink(<socket path>)", so that %v of a *Sink
// names the socket instead of printing its fields.
func (s *Sink) String() string { return "journald.Sink(" + s.path + ")" }

// Stats returns the Sink's counters.
func (s *Sink) Stats() Stats {
	return Stats{Sent: s.sent.Load(), Large: s.large.Load(), Foreign: s.foreignN.Load()}
}

// Write sends p as one record.
func (s *Sink) Write(p []byte) (int, error) {
	if _, err := s.WriteBatch([][]byte{p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteBatch sends recs in order, one entry each, and returns how many it
// sent. At the first failure it stops and returns that record's index and
// the error: the handler retries from there with back-off and, when the
// journal stays unreachable, counts the records left as failed
// (Stats.Failed) and reports the error to Options.OnError. An empty
// record is not sent (the journal would refuse an entry without fields)
// and counts as sent.
func (s *Sink) WriteBatch(recs [][]byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range recs {
		if len(r) == 0 {
			continue
		}
		p := r[1:]
		foreign := r[0] != recordTag
		if foreign {
			p = s.wrapForeign(r)
		}
		large, err := s.conn.send(p)
		if err != nil {
			return i, err
		}
		s.sent.Add(1)
		if large {
			s.large.Add(1)
		}
		if foreign {
			s.foreignN.Add(1)
		}
	}
	return len(recs), nil
}

// wrapForeign encodes a record that this package did not encode as an
// entry at priority 4 with r's text as MESSAGE, in s.foreign.
func (s *Sink) wrapForeign(r []byte) []byte {
	b := append(s.foreign[:0], "PRIORITY=4\nMESSAGE="...)
	mark := len(b)
	b = append(b, bytes.TrimSuffix(r, []byte("\n"))...)
	b = closeField(b, mark)
	b = append(b, s.header...)
	s.foreign = b
	return b
}

// errClosed is what a Sink's sends fail with after Close.
var errClosed = errors.New("journald: the sink is closed")

// Close closes the socket; sends fail afterwards. Close the handler first.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.close()
}
