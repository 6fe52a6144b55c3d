// Package asyncbustest helps test code that logs with asyncbus or slog.
//
// New returns a logger that writes each record, encoded by asyncbus with the
// options given, to the test's log before the logging call returns, one log
// line per output line, attributed to the file and line of the logging call:
//
//	func TestServer(t *testing.T) {
//		log := asyncbustest.New(t, nil)
//		srv := NewServer(log)
//		...
//	}
//
// The handler is closed in t.Cleanup. Records logged after the test has
// ended (by a goroutine that outlives it) are ignored and counted
// (Handler.Ignored) instead of making the testing package panic.
//
// Recorder is a slog.Handler that keeps the records it is given, for tests
// that assert on what was logged.
package asyncbustest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

// New returns a logger writing to tb's log; see NewHandler.
func New(tb testing.TB, opts *asyncbus.Options) *slog.Logger {
	return slog.New(NewHandler(tb, opts))
}

// Handler is a slog.Handler that writes each record to a test's log
// synchronously. Handlers derived from it share its state.
type Handler struct {
	st *state
	ab *asyncbus.Handler
}

// state is shared by a Handler and those derived from it.
type state struct {
	tb testing.TB
	// mu serialises Handle calls and the end of the test: holding it, a
	// Handle encodes, collects exactly its own lines and writes them to tb
	// before the cleanup can mark the test done, and none writes after.
	mu   sync.Mutex
	done bool           // set under mu by the cleanup
	out  syncbuf.Buffer // the drainer's writes; its lock orders them before the Handle that reads them
	root *asyncbus.Handler
	// ignored counts records handled after the test ended; atomic so that
	// Ignored may be read without taking mu.
	ignored atomic.Uint64
}

// NewHandler returns a Handler writing to tb's log. opts are asyncbus's
// options (format, level, ReplaceAttr, Context hook, logger rules...); nil
// means the Console format at Debug level. Whatever opts say, every record
// is written before Handle returns (SyncLevel is the lowest level, the
// overflow policy is Block without timeout) and the ring is 1 MiB unless
// Capacity is set.
func NewHandler(tb testing.TB, opts *asyncbus.Options) *Handler {
	var o asyncbus.Options
	if opts != nil {
		o = *opts
	} else {
		o.Format = asyncbus.Console
		o.Level = slog.LevelDebug
	}
	o.SyncLevel = slog.Level(math.MinInt) // every record is written before Handle returns
	o.Ring.Overflow = asyncbus.Block
	o.Ring.BlockTimeout = 0
	if o.Ring.Capacity == 0 {
		o.Ring.Capacity = 1 << 20
	}
	st := &state{tb: tb}
	st.root = asyncbus.NewHandler(&st.out, &o)
	tb.Cleanup(st.end)
	return &Handler{st: st, ab: st.root}
}

// end marks the test done, then closes the handler.
func (st *state) end() {
	st.mu.Lock()
	st.done = true
	st.mu.Unlock()
	_ = st.root.Close()
}

// Ignored returns how many records were handled after the test ended and
// therefore not written.
func (h *Handler) Ignored() uint64 { return h.st.ignored.Load() }

// Enabled reports whether records at level l are written.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.ab.Enabled(ctx, l)
}

// Handle writes r to the test's log before returning. After the test has
// ended it writes nothing, counts r in Ignored and returns nil.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	st := h.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		st.ignored.Add(1)
		return nil
	}
	err := h.ab.Handle(ctx, r) // written to st.out before it returns (SyncLevel)
	lines := st.out.Take()     // only this record's: Handle calls are serialised by mu
	prefix := ""
	if r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		if f.File != "" {
			prefix = fmt.Sprintf("%s:%d: ", filepath.Base(f.File), f.Line)
		}
	}
	for len(lines) > 0 {
		line := lines
		if i := bytes.IndexByte(lines, '\n'); i >= 0 {
			line, lines = lines[:i], lines[i+1:]
		} else {
			lines = nil
		}
		if prefix != "" {
			// The logging call's own file and line, as t.Log would print
			// them for a call in the test: slog's frames are not helpers.
			fmt.Fprintf(st.tb.Output(), "%s%s\n", prefix, line)
		} else {
			st.tb.Helper()
			st.tb.Log(string(line))
		}
	}
	return err
}

// WithAttrs returns a Handler whose records carry attrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{st: h.st, ab: h.ab.WithAttrs(attrs).(*asyncbus.Handler)}
}

// WithGroup returns a Handler that qualifies later attributes with name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{st: h.st, ab: h.ab.WithGroup(name).(*asyncbus.Handler)}
}

// Named returns a Handler for the logger called name (see
// asyncbus.Handler.Named).
func (h *Handler) Named(name string) *Handler {
	return &Handler{st: h.st, ab: h.ab.Named(name)}
}

var _ slog.Handler = (*Handler)(nil)
