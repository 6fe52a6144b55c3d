package harness

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
)

// LockedBufio guards a bufio.Writer, which is not safe for concurrent use.
// slog's handlers already serialise their Write calls, but the final Flush
// comes from another goroutine and must not race a Write; the mutex costs
// one uncontended lock per record on top of slog's own.
type LockedBufio struct {
	mu sync.Mutex
	bw *bufio.Writer
}

// NewLockedBufio returns a LockedBufio writing to w through a buffer of
// size bytes.
func NewLockedBufio(w io.Writer, size int) *LockedBufio {
	return &LockedBufio{bw: bufio.NewWriterSize(w, size)}
}

// Write buffers p.
func (w *LockedBufio) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Write(p)
}

// Flush writes the buffered bytes to the underlying writer.
func (w *LockedBufio) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Flush()
}

// NoopHandler accepts every record and does nothing: the floor set by
// slog's own front end.
type NoopHandler struct{}

// Enabled reports true for every level.
func (NoopHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle discards the record.
func (NoopHandler) Handle(context.Context, slog.Record) error { return nil }

// WithAttrs returns the handler itself.
func (h NoopHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns the handler itself.
func (h NoopHandler) WithGroup(string) slog.Handler { return h }

// NewNoop is the [Constructor] of the no-op floor: a NoopHandler that
// leaves the file empty (mark its Contestant Discards).
func NewNoop(*os.File) (slog.Handler, func() error, error) { return NoopHandler{}, nil, nil }
