package bus

import (
	"sync/atomic"
	"unsafe"
)

// ring is the byte ring and its cursors: producers reserve space at tail
// (one CAS), copy their record and commit it with one atomic store of its
// header word; the drainer collects committed entries from head, and
// publishes head past what it consumed and zeroed. Its words are in
// docs/design.md's protocol table.
type ring struct {
	// Read-only after New.
	mem      []byte
	base     unsafe.Pointer // &mem[0], 8-byte aligned (checked in New)
	capacity uint64
	mask     uint64

	_ pad
	// tail is the producers' reservation cursor (byte position, never wraps;
	// bit 63 = closed). It is the one contended write of the producer path and
	// has its cache line to itself.
	tail atomic.Uint64
	_    pad
	// head is written by the drainer once per round; every producer reads
	// it, before the reservation and after the commit, so it has a
	// read-mostly line (with Bus.lineBytes).
	head atomic.Uint64 // everything below head is consumed and zeroed
}

// Header word layout (see the package documentation).
const (
	hdrSize      = 8
	flagCommit   = uint64(1) << 63
	flagPadding  = uint64(1) << 62
	flagOversize = uint64(1) << 61
	lenMask      = uint64(1)<<32 - 1
	maxInline    = 1 << 30 // MaxRecord upper bound, keeps lengths well inside 32 bits

	// closedBit is set in the tail cursor by Close: a reservation is a CAS on
	// tail, so once the bit is set no reservation can succeed, and every
	// reservation that did succeed is below the final tail the drainer drains to.
	closedBit = uint64(1) << 63
)

// ringOff is an offset into the ring's memory, in [0, capacity). Ring
// positions (tail, head, reservations) are plain uint64 byte counts that
// never wrap; a position's offset is the position modulo the capacity.
type ringOff uint64

// offsetOf returns the offset in the ring's memory of position pos.
func (r *ring) offsetOf(pos uint64) ringOff { return ringOff(pos & r.mask) }

// hdr returns the header word at ring offset off (a multiple of 8, < capacity).
// unsafe: base is 8-byte aligned (New checks it) and off is a multiple of 8
// below capacity, so the pointer is aligned and inside the region, which r.mem
// keeps alive.
func (r *ring) hdr(off ringOff) *uint64 {
	return (*uint64)(unsafe.Add(r.base, off))
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }
