package bus

import (
	"sync/atomic"

	"github.com/asyncbus/asyncbus/internal/queuedelay"
)

// drainerStats is what the drainer publishes for Stats: its counters and
// its measurements. The drainer is the main writer; a Close that gives up
// adds to written, writtenBytes, failed and markers too, so those are
// multi-writer counters (Add). Its words are in docs/design.md's
// protocol table.
type drainerStats struct {
	written      atomic.Uint64 // Stats.Written: Add (the give-up adds too); exact once the ring is empty
	writtenBytes atomic.Uint64 // Stats.WrittenBytes: as written
	failed       atomic.Uint64 // Stats.Failed: as written; Flush compares snapshots
	batches      atomic.Uint64 // Stats.Batches: a count, the drainer its one writer
	writeCalls   atomic.Uint64 // Stats.WriteCalls: a count, the drainer its one writer
	markers      atomic.Uint64 // Stats.DropMarkers: as written
	highWater    atomic.Uint64 // Stats.QueueHighWater: only rises (atomicMax, by the drainer and Stats)
	lastBatch    atomic.Uint64 // Stats.BatchTarget: the last batch's records, a snapshot (one writer)
	entries      atomic.Uint64 // ring entries consumed (records, refs, padding): a count, one writer
	entryBytes   atomic.Uint64 // ring bytes consumed: a count; with entries, a mean that may lag a batch
}

// Stats is a snapshot of the bus counters. docs/design.md (Accounting) says
// how Enqueued is derived.
type Stats struct {
	Enqueued       uint64 // records offered to Enqueue (accepted + dropped); == Written + Dropped + Failed once the ring is empty (after Flush/Close)
	Written        uint64 // records handed to the output successfully
	WrittenBytes   uint64 // payload bytes of Written
	Dropped        uint64 // records refused: ring full (Drop / timeout) and after Close
	DroppedClosed  uint64 // the part of Dropped refused because the bus was closed
	Failed         uint64 // records accepted but not written because the output kept failing
	Oversize       uint64 // records that took the oversize side path
	Batches        uint64 // drain rounds that wrote something
	WriteCalls     uint64 // calls into the output (Write/WriteBatch/writev syscalls)
	DropMarkers    uint64 // in-band gap markers written
	QueueDepth     uint64 // bytes in the ring now (headers and padding included)
	QueueHighWater uint64 // highest QueueDepth seen (sampled by the drainer and by Stats)
	Capacity       uint64 // ring size in bytes
	BatchTarget    uint64 // records in the last batch written
	Parks          uint64 // times the drainer parked
	Wakeups        uint64 // times a producer woke a parked/sleeping drainer
	Recovered      uint64 // records an earlier process had accepted, replayed from Config.RingFile by New (not part of Enqueued/Written)
	Unrecovered    uint64 // records found in Config.RingFile that could not be replayed (oversize records, whose bytes were on the heap)
	OutputRate     uint64 // the output's recent bytes per second while the drainer writes to it; 0 until measured
}

// Stats returns a snapshot of the counters. It is cheap (a few atomic loads)
// and callable at any time; see docs/design.md (Accounting) for Enqueued.
func (b *Bus) Stats() Stats {
	// Before the counts: once final is seen, the give-up's counts are in
	// them (stored before final; giveup.go).
	final := b.final.Load() // atomic, row final
	// Load the drainer-side counts before tail/head so that records written
	// between the loads are not counted twice in the in-ring estimate.
	s := Stats{
		Written:       b.written.Load(),       // atomic, row written
		WrittenBytes:  b.writtenBytes.Load(),  // atomic, row writtenBytes
		Failed:        b.failed.Load(),        // atomic, row failed
		Dropped:       b.dropped.Load(),       // atomic, row dropped
		DroppedClosed: b.droppedClosed.Load(), // atomic, row droppedClosed
		Oversize:      b.oversize.Load(),      // atomic, row oversize
		Batches:       b.batches.Load(),       // atomic, row batches
		WriteCalls:    b.writeCalls.Load(),    // atomic, row writeCalls
		DropMarkers:   b.markers.Load(),       // atomic, row markers
		Capacity:      b.capacity,
		BatchTarget:   b.lastBatch.Load(), // atomic, row lastBatch
		Parks:         b.parks.Load(),     // atomic, row parks
		Wakeups:       b.wakeups.Load(),   // atomic, row wakeups
		Recovered:     b.recovered,
		Unrecovered:   b.unrecovered,
		OutputRate:    b.outRate.Load(), // atomic, row outRate
	}
	entries, entryBytes := b.entries.Load(), b.entryBytes.Load() // atomic, rows entries, entryBytes
	h := b.head.Load()                                           // atomic, row head
	t := b.tail.Load() &^ closedBit                              // atomic, row tail
	if t > h && !final {                                         // after a give-up what is left is counted as failed
		s.QueueDepth = t - h
	}
	atomicMax(&b.highWater, s.QueueDepth)                    // atomic, row highWater: a reader never lowers it
	s.QueueHighWater = max(b.highWater.Load(), s.QueueDepth) // atomic, row highWater
	var inRing uint64
	if s.QueueDepth > 0 {
		avg := uint64(hdrSize + 200) // before the drainer has seen anything
		if entries > 0 {
			avg = max(entryBytes/entries, hdrSize)
		}
		inRing = max(s.QueueDepth/avg, 1)
	}
	s.Enqueued = s.Written + s.Failed + s.Dropped + inRing
	return s
}

func atomicMax(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// QueueDelay returns the recent delay between Enqueue and the output
// taking a record, per batch (the drainer's queuedelay stage).
func (b *Bus) QueueDelay() queuedelay.Stats { return b.d.qd.Stats() }
