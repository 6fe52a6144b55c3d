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
// them on the next start. Package ringfile has the file format, the ordering
// of the drainer's persisted cursors and the recovery rules; durable.go is
// what the bus gives it (the header word's layout, the numbering, the
// guarded output calls).
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
//	header word    producer (commit, padding),    drainer (collect), Close's     payload copy happens-before the header store;
//	               write-through rest             give-up count, recovery        a zero word means "not committed"
//	tail           producers (CAS), Close (Or     producers, drainer, Stats      the only contended producer write; closedBit
//	               closedBit)                                                    set once: every reservation below the final tail
//	head           drainer (release, adoptHead)   producers (before tail),       zeroing happens-before the store; h <= t
//	                                                Error waits (a snapshot)
//	wtHead         write-through producer         producers, drainer (adopt,     everything below it is in the output; only the
//	                                                waits), Close's count         drainer moves head past it
//
// The Bus's own slow-path words:
//
//	word           stored by                      loaded by                      pairs with / invariant
//	lineLen        Block producers under mu       producers (before reserving)   len(line) after the change under mu; non-zero:
//	               (joinLine, leaveLine)                                         a newcomer queues behind (awaitTurn)
//	dropped        producers (drop, dropClosed)   Stats                          a count; includes droppedClosed
//	droppedClosed  producers (dropClosed)         Stats                          a count, added after dropped
//	gapPos         producers under dropMu,        drainer (collect), write-      lowest pending gap; the lock orders the list
//	               drainer (takeGaps)             through (mayWriteThrough)
//	oversize       producers (enqueueOversize)    Stats                          a count
//	oversizeBytes  producers (add, before the     producers (the oversize        heap bytes not yet written: bounds them by
//	               commit), drainer and give-up   budget), Stats                 Capacity; a stale value only delays a record
//	               count (subtract once out)
//	waiters        Block producers (park)         drainer after its head store   see waitForRoom's lost-wake-up proof
//	flushPending   Flush/Sync/Close (request)     drainer (takeFlushes, ready)   set after the request is appended under mu
//
// The drainer's idle strategy (type idleStrategy):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	state          drainer (wait), wakers (CAS    producers (wakeAfterCommit),   see idleWait's lost-wake-up proof
//	               to running)                    kick, releaseWrittenThrough
//	wakeups        the waker whose CAS won        Stats                          a count, added after the CAS
//	parks          drainer (wait, before a park)  Stats                          a count (single writer)
//
// The write-through in flight (type writeThroughState):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	wtErr          write-through producer         drainer (Load, then Swap to    the last unreported error; a later one
//	               (reportWriteThrough)           nil, under wmu)                replaces it: reports are rate-limited anyway
//	wtCount        write-through producer         Stats                          a count, added before wtHead's store
//	wtRest         write-through producer under   drainer (restIndex), after     stored before the rest's header (release);
//	               wmu                            its acquire of that header     positions never repeat
//	wtRestLen      write-through producer under   drainer (restIndex), with      stored before wtRest: a drainer that matches
//	               wmu, before wtRest             wtRest                         wtRest sees its length
//	owing          drainer (tear, admit)          write-through producer         stored before head moves past the torn batch
//	wtStart        write-through producer under   Close's give-up count          stored before wtClaim and the load of aborted
//	               wmu (1 + position)
//	wtEnd          write-through producer under   Close's give-up count          stored before wtStart, with it
//	               wmu
//	wtClaim        write-through producer, give-  both (CAS)                     whoever moves it off wtWriting first decides who
//	               up count (CAS)                                                counts the record
//
// What the caller policy reads of the output (type callerGate):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	callSince      whoever calls the output       producers (outputSpeed,        0 when no call is in flight; calls never overlap
//	               (beginCall/endCall)            inOutputCall, quiet), giveUp   (wmu, or owing keeps write-throughs out)
//	speed          whoever calls the output       producers (outputSpeed)        stored after lastCallEnd; only on a change;
//	               (endCall, load and store)                                     one caller at a time (calls never overlap)
//	lastCallEnd    whoever calls the output       write-through producer         stored before callSince's 0: a quiet check that
//	               (endCall)                      (quiet)                        loads callSince == 0 first sees that call's end
//	wtLimit.tat    write-through producer (CAS,   the same                       GCRA; uncontended: only wmu's holder uses it
//	               under wmu)
//	qwLimit.tat    producers that found a short   the same                       GCRA; a CAS loser re-reads and retries
//	               queue (CAS)
//
// The drainer's published counters and measurements (type drainerStats):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	written,       drainer (write), write-        Stats                          counts (Add: several writers); a snapshot,
//	writtenBytes   through producer, give-up                                     exact once the ring is empty
//	               count
//	failed         drainer, write-through         Stats, Flush (failures since   a count (Add); Flush compares snapshots
//	               producer, give-up count        its last answer)
//	writeCalls     drainer, write-through         Stats                          a count (Add)
//	               producer
//	markers        drainer, give-up count         Stats                          a count (Add)
//	batches        drainer (single writer)        Stats                          a count
//	entries,       drainer (single writer)        Stats (Enqueued's estimate)    counts: the mean entry size of what is queued
//	entryBytes
//	highWater      drainer, Stats (CAS max)       drainer, Stats                 only rises (atomicMax)
//	batchTarget    drainer (single writer)        Stats                          a snapshot
//	outRate        drainer (measure, once per     drainer (batchCap), Error      a snapshot: a stale rate only sizes a batch or
//	               batch written whole)           callers (writableWithin),      skips or makes one bounded wait
//	                                              Stats
//
// The give-up (type giveUpState; giveup.go has the handshake):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	aborted        Close giving up                drainer (enterCall, loop),     stored before call is CASed
//	                                              write-through producer
//	call           drainer (enterCall/leaveCall)  Close giving up (CAS)          none/out/abandoned handshake
//	final          the give-up count              Stats (first), backlog         stored after the give-up's counts
//
// The durable ring file's words (state slots, generation, sequence slots)
// have their table in package ringfile's documentation.
//
// The OnError reporter (type reporter):
//
//	word           stored by                      loaded by                      pairs with / invariant
//	lost           senders that found the queue   the reporter goroutine (Swap   every lost report is told exactly once
//	               full (Add)                     to 0, tellLost)
//
// The drainer's states (idleStrategy.state; idleWait publishes every one but
// running, and a waker CASes it back to running and sends one token):
//
//	running --idle sleep, gather, hold--> sleeping --timer | past watermark | kick--> running
//	running --nothing to do---------------> parked --commit | Flush | Close--> running
//	running --Flush/Close behind a
//	          write-through in flight----> waitWT --its end | commit | kick--> running
//
// The output's health (drainer.health), moved by what calls
// into the output return:
//
//	healthy --batch spent its attempts--> failing --probe due or wanted--> probing
//	probing --progress--> healthy          probing --nothing written--> failing
//	healthy/probing --given up mid-record, no cut back--> torn --owed bytes out--> healthy
//
// Write-through needs a quiet handler (callerGate.quiet): no call into the output
// in flight and none ended for QuietAfter; busy logging keeps the drainer
// calling, so its records take the ring.
//
// And, for callers, the breaker (callerGate): fast; slow (SlowCallsToTrip
// calls over SlowCall in a row, or one over VerySlowCall, or one in flight
// that long; for files and pipes SlowDirectCall and StuckDirectCall: no
// write-through, no quiet wait); stuck (over ErrorWaitMax: no wait at
// all); one fast call resets it.
//
// # Caller policy
//
// callerActionFor is the one answer to "may this log call touch or wait
// for the output, and how?": write its record through, wait quietly, wait
// for its write or its sync, wait or spin for room, drop, or return. The
// Enqueue variants, SyncBounded and the root's configuration
// (CallersMayTouch, ErrorsWait) all ask it; callerInputs lists what it
// reads, and TestCallerActionFor holds its table. The busy path of
// Enqueue asks mayAct first, a necessary condition for any answer but
// "return" that TestCallerPolicyMayAct checks against the policy.
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
// is counted as failed (Stats then reports no queue), and a write-through
// still in flight counts its own record when its call returns.
package bus
