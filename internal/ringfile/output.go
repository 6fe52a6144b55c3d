package ringfile

import (
	"io"
	"os"
	"strings"

	"github.com/asyncbus/asyncbus/internal/outputcall"
	"github.com/asyncbus/asyncbus/internal/syncerr"
)

// SetOutput sets o's output hooks (Write, Sync, Settle, Position, Read,
// Cut) for the output w. Every call into w is guarded: a panic fails the
// replay with an error, never the process (New runs the replay).
func (o *Options) SetOutput(w io.Writer) {
	var buf []byte
	o.Write = func(recs [][]byte) error { return writeAll(w, recs, &buf) }
	o.Sync = nil
	if s, ok := w.(interface{ Sync() error }); ok {
		o.Sync = func() error {
			err := outputcall.Sync(s)
			if syncerr.NotSyncable(err) {
				return nil // a pipe, a terminal: nothing to make durable
			}
			return err
		}
	}
	o.Settle = nil
	if s, ok := w.(TornTailSettler); ok {
		o.Settle = s.SettleTornTail
	}
	o.Position, o.Read, o.Cut = outputHooks(outputFile(w))
}

// TornTailSettler is an output that set aside a torn tail when it was
// opened and holds the report until it knows whether a replay writes that
// record again (filesink.File). SettleTornTail is called once before the
// output's first write: with the record a replay is about to write again,
// whole, because the crash interrupted its write, or with nil.
type TornTailSettler interface {
	SettleTornTail(rec []byte)
}

// SettleTornTail tells w, if it holds a torn-tail report, that no replay
// covers it (New calls it after any replay; once settled, later calls do
// nothing).
func SettleTornTail(w io.Writer) {
	if s, ok := w.(TornTailSettler); ok {
		s.SettleTornTail(nil)
	}
}

// writeAll writes recs to w in order: one WriteBatch loop for an output
// with a WriteBatch method (the bus's BatchWriter), one Write of the
// concatenation otherwise.
func writeAll(w io.Writer, recs [][]byte, buf *[]byte) error {
	if bw, ok := w.(outputcall.Batcher); ok {
		for len(recs) > 0 {
			n, err := outputcall.WriteBatch(bw, recs)
			recs = recs[max(0, min(n, len(recs))):]
			if err != nil {
				return err
			}
			if n <= 0 {
				return io.ErrShortWrite
			}
		}
		return nil
	}
	b := (*buf)[:0]
	for _, r := range recs {
		b = append(b, r...)
	}
	*buf = b
	if len(b) == 0 {
		return nil
	}
	n, err := outputcall.Write(w, b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

// outputFile is the output as recovery can read it: an *os.File, or the
// path of a file output (a Path method: filesink.File).
func outputFile(w io.Writer) (*os.File, string) {
	if f, ok := w.(*os.File); ok {
		return f, ""
	}
	if o, ok := w.(interface{ Path() string }); ok {
		if p, ok := outputcall.Path(o); ok && strings.TrimSpace(p) != "" {
			return nil, p
		}
	}
	return nil, ""
}
