package asyncbus

import (
	"bytes"
	"context"
	"log/slog"
	"unsafe"

	"github.com/asyncbus/asyncbus/internal/bus"
)

// writeLine is HandleEncoded: a copy
// of line is enqueued at level, counted in the per-level counts and waited
// for as a record at that level is (enqueue). The bus copies line into the
// ring itself; the pooled buffer only lends its stripe of the counts.
func (h *Handler) writeLine(level slog.Level, line []byte) error {
	b := bufPool.Get().(*buffer)
	h.tree.logged.add(level, b) // levelcounts.go
	// The line stands for the message in the report of a line written after
	// Close (noteClosed), which formats it before enqueue returns, while
	// line is still the caller's: no copy is made for it.
	msg := unsafe.String(unsafe.SliceData(line), len(bytes.TrimRight(line, "\n")))
	return h.enqueueBytes(b, line, level, msg)
}

// syncBounded writes and syncs every record enqueued before the call,
// waiting at most the bus's bound on a log call's sync: the wait of a
// record at or above SyncLevel, and of logwriter's Sync.
func (h *Handler) syncBounded(ctx context.Context) error {
	err := h.tree.bus.SyncBounded(ctx)
	if err == bus.ErrWaitBound {
		return errSyncBound
	}
	return publicErr(err)
}
