package asyncbus

import (
	"time"

	"github.com/asyncbus/asyncbus/internal/bus"
)

// Stats is a snapshot of a handler's counters; handlers derived from one
// NewHandler share them. Enqueued is derived, not counted on the hot path:
// it is exact whenever the ring is empty, so after Flush or Close (with no
// Handle running) Enqueued == Written + Dropped + Failed. With
// Options.Features.Sampler, records offered to Handle (enabled ones)
// satisfy Enqueued + Sampled == offered + SampleMarkers. How the drainer
// batches, writes and parks is in the DrainerStats debugging view.
type Stats struct {
	// Enqueued counts records offered to the ring (accepted + dropped).
	Enqueued uint64
	// Written counts records handed to the output successfully.
	Written uint64
	// WrittenBytes is the encoded size of the Written records.
	WrittenBytes uint64
	// Dropped counts records refused: ring full (Drop, or Block with a
	// BlockTimeout) and after Close.
	Dropped uint64
	// DroppedClosed is the part of Dropped refused because the handler was
	// closed.
	DroppedClosed uint64
	// Failed counts records accepted but not written because the output
	// kept failing (each failure is reported once to Options.OnError).
	Failed uint64
	// Oversize counts records longer than an eighth of the ring, which are
	// kept on the heap instead of in the ring (and not in a ring file).
	Oversize uint64
	// DropMarkers counts in-band lines written at gaps left by drops.
	DropMarkers uint64
	// QueueDepth is the number of ring bytes in use now.
	QueueDepth uint64
	// QueueHighWater is the highest QueueDepth seen.
	QueueHighWater uint64
	// Capacity is the ring size in bytes.
	Capacity uint64
	// Recovered counts records an earlier process had accepted, replayed
	// from Options.Ring.File at start (not part of Enqueued or Written).
	Recovered uint64
	// Sampled counts records Options.Features.Sampler refused: never encoded nor
	// enqueued. It is counted with one atomic add on the refusal path only.
	Sampled uint64
	// SampleMarkers counts the "suppressed N similar records" lines written
	// for a MarkingSampler (part of Enqueued).
	SampleMarkers uint64
	// Unrecovered counts records found in Options.Ring.File that could not
	// be replayed (oversize records, whose bytes were on the heap).
	Unrecovered uint64
	// RecorderKept counts the records the flight recorder kept (records
	// below the handler's level, see Options.Features.FlightRecorder); they are not
	// in Enqueued.
	RecorderKept uint64
	// RecorderWritten counts the kept records a trigger wrote, inside its
	// entry (which Enqueued and Written count once; if the output then
	// fails, Failed counts the entry once).
	RecorderWritten uint64
	// RecorderExpired counts the kept records never written: aged past
	// MaxAge, pushed out by newer ones, larger than the recorder, or still
	// kept when the handler closed.
	RecorderExpired uint64
	// RecorderLost counts the kept records a trigger took with it when the
	// trigger was refused (ErrDropped, ErrClosed). After Close, with no
	// Handle running, RecorderKept == RecorderWritten + RecorderExpired +
	// RecorderLost, less the records larger than the recorder (expired but
	// never kept).
	RecorderLost uint64

	// LoggedTrace counts the records logged at levels from LevelTrace up to
	// slog.LevelDebug, excluded. Logged, here and in the six fields after,
	// means taken by Handle after the Sampler: offered to the ring (so also
	// in Enqueued, whatever became of them: written, dropped, failed,
	// refused after Close) or kept by the flight recorder (so also in
	// RecorderKept, and not counted again when a trigger writes them).
	// Records the Sampler refused, records too large for the flight
	// recorder, and asyncbus's own marker lines are not counted: after
	// Flush, with no Handle running, the seven sum to Enqueued -
	// SampleMarkers + RecorderKept. Each named level counts its records and
	// those up to the next named level. The counts are striped over cache
	// lines: goroutines logging at once do not contend on them.
	LoggedTrace uint64
	// LoggedDebug counts the records logged at levels from slog.LevelDebug
	// up to slog.LevelInfo, excluded.
	LoggedDebug uint64
	// LoggedInfo counts those from slog.LevelInfo up to slog.LevelWarn.
	LoggedInfo uint64
	// LoggedWarn counts those from slog.LevelWarn up to slog.LevelError.
	LoggedWarn uint64
	// LoggedError counts those from slog.LevelError up to LevelFatal.
	LoggedError uint64
	// LoggedFatal counts those at LevelFatal and above.
	LoggedFatal uint64
	// LoggedOther counts those below LevelTrace (logr's V(9) and beyond).
	LoggedOther uint64

	// RunID is the run identity the records carry with their sequence
	// numbers (Options.Features.Sequence): 16 hex digits, random per NewHandler or
	// Open, shared by the handlers derived from it; "" when Sequence is off.
	RunID string
	// QueueDelayP50, QueueDelayP99 and QueueDelayMax are how long records
	// waited between Handle and the output taking them, over the last 10
	// to 20 seconds: per batch written by the handler's goroutine (records
	// a caller wrote itself did not wait), the median, 99th percentile and
	// largest of the batches' oldest records' waits. Each is an upper
	// bound, above the true wait by at most one round of the drainer (the
	// write before, or an idle wait of at most MaxLatency/2); the two
	// quantiles are also rounded up to a histogram bucket (at most 25 %).
	// Zero before the first batch.
	QueueDelayP50, QueueDelayP99, QueueDelayMax time.Duration
}

func statsFrom(s bus.Stats) Stats {
	return Stats{
		Enqueued:       s.Enqueued,
		Written:        s.Written,
		WrittenBytes:   s.WrittenBytes,
		Dropped:        s.Dropped,
		DroppedClosed:  s.DroppedClosed,
		Failed:         s.Failed,
		Oversize:       s.Oversize,
		DropMarkers:    s.DropMarkers,
		QueueDepth:     s.QueueDepth,
		QueueHighWater: s.QueueHighWater,
		Capacity:       s.Capacity,
		Recovered:      s.Recovered,
		Unrecovered:    s.Unrecovered,
	}
}

// DrainerStats is a debugging view of the drainer's internals, for
// diagnosing how it batches, writes and parks, not for alerting: its fields
// may be renamed, changed or removed between versions, unlike those of
// Stats. Like Stats, it is shared by the handlers derived from one
// NewHandler.
type DrainerStats struct {
	// Batches counts drain rounds that wrote something.
	Batches uint64
	// WriteCalls counts calls into the output (Write, WriteBatch or writev).
	WriteCalls uint64
	// BatchTarget is the number of records in the drainer's last batch
	// (batches take every record queued, up to a cache-sized batch).
	BatchTarget uint64
	// Parks counts the times the idle drainer parked.
	Parks uint64
	// Wakeups counts the times a caller woke a parked or sleeping drainer.
	Wakeups uint64
}

// DrainerStats returns a snapshot of the drainer's internal counters (see
// DrainerStats, the type, for why they are not in Stats). It is cheap and
// safe at any time.
func (h *Handler) DrainerStats() DrainerStats {
	return drainerStatsFrom(h.tree.bus.Stats())
}

func drainerStatsFrom(s bus.Stats) DrainerStats {
	return DrainerStats{
		Batches:     s.Batches,
		WriteCalls:  s.WriteCalls,
		BatchTarget: s.BatchTarget,
		Parks:       s.Parks,
		Wakeups:     s.Wakeups,
	}
}

// addDelayStats sets the Stats.QueueDelay fields.
func addDelayStats(s *Stats, b *bus.Bus) {
	d := b.QueueDelay()
	s.QueueDelayP50, s.QueueDelayP99, s.QueueDelayMax = d.P50, d.P99, d.Max
}
