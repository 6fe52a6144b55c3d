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
// followed by the payload, padded to a multiple of 8. Header words are read and
// written with sync/atomic through an unsafe pointer into the region (hdr),
// and New refuses a region whose base is not 8-byte aligned (64-bit atomics
// require it on 32-bit platforms, and a header must never straddle a cache
// line). Package unsafe serves three purposes, each with its reason at the
// site: the ring's header words (ring.hdr, from the base pointer that
// newBus and openRing take of the region), the ring memory's alignment
// (ringMemory views a []uint64 as bytes, and checks a test's region),
// and, on Linux, the writev system call's iovec array. (The ring file's
// own header words are package ringfile's: File.word, in a page-aligned
// mapping.) Space the drainer has consumed is
// zeroed before it is handed back to producers, so a zero word always means
// "not committed yet" and stale payload bytes can never look like a header.
//
// # Producer path (Enqueue)
//
// A producer reserves space with one CAS on the tail cursor (the only contended
// write per record), copies the payload, then publishes it with one atomic store
// of the header. It allocates nothing, takes no lock and touches no channel,
// except on the slow paths: ring full, oversize record, waking a parked
// drainer (at most once per park), or a bounded wait for the drainer.
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
// them on the next start. Package ringfile has the file format, the ordering
// of the drainer's persisted cursors and the recovery rules; durable.go is
// what the bus gives it (the header word's layout, the numbering, the
// guarded output calls).
//
// # One writer, one rule for waits
//
// Only the drainer goroutine calls the output (Write, WriteBatch, Sync;
// TestOnlyTheDrainerCallsTheOutput). Callers may wait for it, and every
// wait is waitWritten: until ring position P is written (and synced),
// within a bound; a log call's wait is skipped when the output is stuck
// (outputWatch.stuck) or failing, when the caller is inside a call into
// the output, or when the output's measured pace cannot reach P within
// the bound. The room wait of Block mode follows the same rule: it waits
// while the output moves and drops (counted, marked) once it is stuck.
//
// # Protocol
//
// Every cross-goroutine word, who writes it, who reads it, and what the
// ordering guarantees, one table per type that holds words. All are
// sync/atomic (sequentially consistent in Go's memory model), so a
// "release" store below is simply an atomic store that a reader's atomic
// load of the same word pairs with; the comment at each site names its
// row ("row tail").
//
// The ring (type ring, and the header words in its memory):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	header word    producer (commit, padding)     drainer (collect), give-up     payload copy happens-before the header store;
//	                                              count, Backlog, recovery,      a zero word means "not committed" (hopeless:
//	                                              waits (hopeless, the word      a stale word only makes one bounded wait)
//	                                              at head)
//	tail           producers (CAS), Close (Or     producers, drainer, Stats      the only contended producer write; closedBit
//	               closedBit), drainer (rewind:                                  set once: every reservation below the final tail;
//	               CAS from head, empty ring)                                    rewind's CAS fails once anything is reserved
//	head           drainer (release, rewind)      producers (before tail),       zeroing happens-before the store; h <= t
//	                                              waits (hopeless), Stats
//
// The Bus's own slow-path words:
//
//	word           stored by                      loaded by                      pairs with / invariant
//	lineLen        Block producers under mu       producers (before reserving)   len(line) after the change under mu; non-zero:
//	               (joinLine, leaveLine)                                         a newcomer queues behind (awaitTurn)
//	dropped        producers (drop, dropClosed)   Stats                          a count; includes droppedClosed
//	droppedClosed  producers (dropClosed)         Stats                          a count, added after dropped
//	gapPos         producers under dropMu,        drainer (collect)              lowest pending gap; the lock orders the list
//	               drainer (takeGaps)
//	oversize       producers (enqueueOversize)    Stats                          a count
//	oversizeBytes  producers (add, before the     producers (the oversize        heap bytes not yet written: bounds them by
//	               commit), drainer and give-up   budget), Stats                 Capacity; a stale value only delays a record
//	               count (subtract once out)
//	waiters        Block producers (park)         drainer after its head store   see waitForRoom's lost-wake-up proof
//	flushPending   waits (request)                drainer (takeFlushes, ready)   set after the request is appended under mu
//
// The drainer's idle strategy (type idleStrategy):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	state          drainer (wait), wakers (CAS    producers (wakeAfterCommit),   see idleWait's lost-wake-up proof
//	               to running)                    kick
//	wakeups        the waker whose CAS won        Stats                          a count, added after the CAS
//	parks          drainer (wait, before a park)  Stats                          a count (single writer)
//
// What callers read of the output (type outputWatch):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	callSince      drainer (enterCall, leave-     waits (stuck, inOutputCall),   0 when no call is in flight; one writer
//	               Call)                          giveUp
//	callTid        drainer (once, at its start,   waits (stuck)                  the drainer's OS thread (it keeps it: Lock-
//	               before any call)                                              OSThread); stored before callSince first is
//	failing        drainer (setFailing, on a      waits (hopeless)               a snapshot: a stale value only skips or makes
//	               change)                                                       one bounded wait
//	outRate        drainer (measure, once per     waits (hopeless), Stats        a snapshot: a stale pace only skips or makes
//	               sample)                                                       one bounded wait
//	quietTAT       producers that found a short   the same                       GCRA; a CAS loser re-reads and retries
//	               queue (CAS)
//
// The drainer's published counters and measurements (type drainerStats):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	written,       drainer (writeRound), give-    Stats                          counts (Add: two writers); a snapshot,
//	writtenBytes   up count                                                      exact once the ring is empty
//	failed         drainer, give-up count         Stats, Flush (failures since   a count (Add); Flush compares snapshots
//	                                              its last answer)
//	markers        drainer, give-up count         Stats                          a count (Add)
//	writeCalls     drainer (single writer)        Stats                          a count
//	batches        drainer (single writer)        Stats                          a count
//	entries,       drainer (single writer)        Stats (Enqueued's estimate)    counts: the mean entry size of what is queued
//	entryBytes
//	highWater      drainer, Stats (CAS max)       drainer, Stats                 only rises (atomicMax)
//	batchTarget    drainer (single writer)        Stats                          a snapshot
//
// The queue's delay (type queuedelay.Delay, the drainer's stage):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	buckets        drainer (written, decay)       QueueDelay                     counts; a snapshot a batch apart is as good
//	maxNow         drainer (written, decay)       QueueDelay                     the largest delay since the last decay
//	maxBefore      drainer (decay)                QueueDelay                     the largest of the period before; no order with
//	                                                                             maxNow is needed (QueueDelay takes the max)
//
// The give-up (type giveUpState; giveup.go has the handshake):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	aborted        Close giving up                drainer (enterCall, loop,      stored before call is CASed
//	                                              admit)
//	call           drainer (enterCall/leaveCall)  Close giving up (CAS)          none/out/abandoned handshake
//	final          the give-up count              Stats (first), Backlog         stored after the give-up's counts
//
// The durable ring file's words (state slots, generation, sequence slots)
// have their table in package ringfile's documentation.
//
// The OnError reporter (type reporter.Reporter):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	lost           senders that found the queue   the reporter goroutine (Swap   every lost report is told exactly once
//	               full (Add)                     to 0, tellLost)
//
// The drainer's states (idleStrategy.state; idleWait publishes every one but
// running, and a waker CASes it back to running and sends one token):
//
//	running --idle sleep, gather, hold--> sleeping --timer | wake backlog | kick--> running
//	running --nothing to do---------------> parked --commit | Flush | Close--> running
//
// The output's health (drainer.health), moved by what calls
// into the output return:
//
//	healthy --batch spent its attempts--> failing --probe due or wanted--> probing
//	probing --progress--> healthy          probing --nothing written--> failing
//	healthy/probing --given up mid-record, no cut back--> torn --owed bytes out--> healthy
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
// After a Close that gave up it is exact at once: what was left in the ring
// is counted as failed (Stats then reports no queue).
package bus
