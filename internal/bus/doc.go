// Package bus is the asyncbus data bus, internal to the module: a fixed-size, lock-free,
// multi-producer single-consumer byte ring and the one drainer goroutine,
// the only goroutine that calls the output, which moves committed records
// to an io.Writer in batches that stay in cache.
//
// # Ring layout
//
// The ring is a plain byte region of Capacity bytes (a power of two) with no Go
// pointers in it, so it may live in a memory-mapped file. Every entry starts on
// an 8-byte boundary with an 8-byte little-endian header word:
//
//	bit 63       committed: the entry is complete and may be read
//	bit 62       padding: the entry only fills the end of the region (wrap)
//	bit 61       oversize reference: the payload lives in the heap side table
//	bits 32..60  file-backed ring only: 29-bit checksum of the payload (else 0)
//	bits 0..31   payload length (padding: the whole span including the header;
//	             oversize reference: the heap record's length)
//
// followed by the payload, padded to a multiple of 8. Header words are read
// and written with sync/atomic through an unsafe pointer into the region
// (ring.hdr), whose base is 8-byte aligned (64-bit atomics on 32-bit
// platforms need it; a header never straddles a cache line). Unsafe serves
// only those words and that alignment, with its reason at each site.
// Consumed space is zeroed before producers get it back: a zero word is
// "not committed yet", and stale payload never looks like a header.
//
// # One writer, one rule for waits
//
// A producer reserves space with one CAS on the tail cursor (the only
// contended write per record), copies the payload and publishes it with
// one atomic store of the header; it takes no lock but on slow paths
// (ring full, oversize record, waking a parked drainer, a bounded wait).
// Only the drainer goroutine calls the output (Write, WriteBatch, Sync;
// TestOnlyTheDrainerCallsTheOutput). Callers may wait for it, and every
// wait is waitWritten: until ring position P is written (and synced),
// within a bound (waits.go; docs/guarantees.md has the table).
//
// A record longer than maxRecord is copied to the heap, keyed by its ring
// position, with an 8-byte reference entry in the ring: ring order is
// kept. With Config.RingFile the ring lives in a MAP_SHARED file that New
// replays (package ringfile; durable.go is the glue).
//
// # Protocol
//
// Every cross-goroutine word has a row in docs/design.md's protocol
// table (who stores it, who loads it, what the order guarantees) and a
// one-line comment at its declaration; each atomic site names its row
// ("row tail"). All are sync/atomic, sequentially consistent in Go's
// memory model.
package bus
