package bus

import (
	"runtime"
	"sync/atomic"
)

// Backlog returns how many records wait in the ring behind the batch the
// output is writing: the committed records from the end of that batch up
// to the first reservation not committed yet (a record still being
// enqueued). Only the output may call it, from within its write call (on
// the drainer goroutine, whose read position it reads); after a Close that
// gave up it returns 0, what was left being counted as failed.
func (b *Bus) Backlog() uint64 {
	if b.final.Load() { // atomic, row final: set by the give-up's count (giveup.go), which owns what is left
		return 0
	}
	d := &b.d
	// The drainer is in the output's call: its read position stays put,
	// and no producer reserves at or past it beyond the tail loaded here.
	end := b.tail.Load() &^ closedBit // atomic, row tail
	var n uint64
	b.walkQueued(d.pos, end, false, func(uint64, uint64) { n++ })
	return n
}

// walkQueued calls fn with the position and header word of each record
// committed in the ring from pos up to end, padding skipped. At a
// reservation not committed yet it stops, or, with wait (the give-up's
// count: its producer is a few instructions from its commit), yields
// until it is committed.
func (b *Bus) walkQueued(pos, end uint64, wait bool, fn func(p, h uint64)) {
	for pos < end {
		h := atomic.LoadUint64(b.hdr(b.offsetOf(pos))) // atomic, row header word: acquire: pairs with the commit's release store
		switch {
		case h&flagCommit == 0 && !wait:
			return // being enqueued: not waiting yet
		case h&flagCommit == 0:
			runtime.Gosched()
		case h&flagPadding != 0:
			pos += h & lenMask
		case h&flagOversize != 0:
			fn(pos, h)
			pos += hdrSize
		default:
			fn(pos, h)
			pos += align8(hdrSize + h&lenMask)
		}
	}
}
