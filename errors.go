package asyncbus

import (
	"context"
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by Handle after Close. The record is counted in
	// Stats.Dropped and Stats.DroppedClosed; the first such record is also
	// reported to Options.OnError, with an error that wraps ErrClosed.
	ErrClosed = errors.New("asyncbus: handler closed")
	// ErrDropped is returned by Handle when the ring was full and the
	// record was dropped (Drop mode, or Block with a BlockTimeout).
	ErrDropped = errors.New("asyncbus: ring full, record dropped")
	// ErrRingLocked is returned (wrapped) by Open when Options.Ring.File is
	// locked by another process or another handler of this one.
	ErrRingLocked = errors.New("asyncbus: ring file is in use by another process")
	// ErrRetrying is matched (errors.Is) by the output error that Flush, a
	// SyncLevel record or an Error record gets while its records are still
	// being retried: with Options.Retry.Attempts above the default, those
	// callers stop waiting after the default four attempts, and the
	// records stay queued. The error also matches the output's own error.
	ErrRetrying = errors.New("asyncbus: the output is failing; the records stay queued and are retried")
)

// errSyncBound is Handle's result for a record at or above
// Options.SyncLevel whose write and sync did not finish within the bound
// on that wait (5 s, or none while the output is stuck): the record stays
// queued and is written when the output recovers.
var errSyncBound = fmt.Errorf("asyncbus: the output did not finish the write and sync in time; the record stays queued: %w", context.DeadlineExceeded)
