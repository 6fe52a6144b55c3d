package asyncbus

import "errors"

var (
	// ErrClosed is returned by Handle after Close. The record is counted in
	// Stats.Dropped and Stats.DroppedClosed.
	ErrClosed = errors.New("asyncbus: handler closed")
	// ErrDropped is returned by Handle when the ring was full and the
	// record was dropped (Drop mode, or Block with a BlockTimeout).
	ErrDropped = errors.New("asyncbus: ring full, record dropped")
	// ErrRingLocked is returned (wrapped) by Open when Options.RingFile is
	// locked by another process or another handler of this one.
	ErrRingLocked = errors.New("asyncbus: ring file is in use by another process")
)
