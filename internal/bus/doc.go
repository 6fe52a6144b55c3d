// Package bus is the asyncbus data bus, internal to the module: a fixed-size, lock-free,
// multi-producer single-consumer byte ring and the one adaptive drainer
// goroutine that moves committed records to an io.Writer in large batches.
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
// followed by the payload, padded to a multiple of 8. Header words are read and
// written with sync/atomic through an unsafe pointer into the region; that is
// the only use of package unsafe (see hdr), and New refuses a region whose base
// is not 8-byte aligned (64-bit atomics require it on 32-bit platforms, and a
// header must never straddle a cache line). Space the drainer has consumed is
// zeroed before it is handed back to producers, so a zero word always means
// "not committed yet" and stale payload bytes can never look like a header.
//
// # Producer path (Enqueue)
//
// A producer reserves space with one CAS on the tail cursor (the only contended
// write per record), copies the payload, then publishes it with one atomic store
// of the header. It allocates nothing, takes no lock and touches no channel,
// except on the slow paths: ring full, oversize record, or waking a parked
// drainer (at most once per park).
//
// # Oversize records
//
// A record longer than MaxRecord is copied to the heap, stored in a side table
// keyed by its ring position, and an 8-byte oversize-reference entry is
// committed in the ring in its place. Ordering is therefore exactly the ring
// order, the same as for ordinary records. Oversize records cost one heap
// allocation each, their outstanding bytes are limited to Capacity (beyond that
// they are treated like a full ring), and they will not be crash-durable when
// the ring memory is a mapped file.
//
// # Durable ring
//
// With Config.RingFile the ring lives in a MAP_SHARED file, so committed
// records survive the death of the process in the page cache and New replays
// them on the next start; see ringfile.go for the file format, the ordering
// of the drainer's persisted cursors and the recovery rules.
//
// # Accounting
//
// Stats.Enqueued is not counted on the producer path (that would be a second
// contended atomic per record). It is derived as
// Written + Failed + Dropped + (records still in the ring), where the last term
// is zero when the ring is empty and otherwise estimated from the queue depth
// and the average entry size the drainer has seen. It is therefore exact
// whenever the ring is empty, in particular after Flush or Close returns with no
// Enqueue running concurrently, where Enqueued == Written + Dropped + Failed.
package bus
