package asyncbus

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// Sampler decides, before a record is encoded, whether it is written
// (Options.Features.Sampler). *sampling.Sampler implements it: the first N records
// per tick of each (level, message, logger) key, then every Mth.
//
// Sample is called on the logging goroutine for every enabled record, with
// the record's time, level, message and the handler's logger name (see
// Named), and must be safe for concurrent use. A false result drops the
// record before encoding; it is counted in Stats.Sampled.
//
// A Sampler that is also a MarkingSampler (as *sampling.Sampler is) is
// bound to the handler once, and the handler writes its "suppressed N
// similar records" markers to its own output.
type Sampler interface {
	Sample(t time.Time, level slog.Level, msg, logger string) bool
}

// MarkingSampler is a Sampler whose refused records are reported by marker
// records the handler writes: NewHandler binds it once with WithMarkers
// and consults the Sampler that returns instead. *sampling.Sampler
// implements it.
//
// The bound Sampler calls mark (from within Sample, at its tick boundaries
// or when it makes room for another key's count, or from a Report() error
// method, which Close calls if the bound Sampler has one) with a key and
// the number n of its records refused since its last marker; the handler
// writes the marker line "suppressed N similar records" at that level,
// with the key's message under "sampled_msg" and its logger name, to its
// output. Markers never pass through the Sampler and carry no context
// fields; they are counted in Stats.SampleMarkers (and in Enqueued, like
// any record).
type MarkingSampler interface {
	Sampler
	WithMarkers(mark func(level slog.Level, msg, logger string, n uint64) error) Sampler
}

// sampledMsgKey is the key of the sampled message in a marker; the same as
// sampling.SuppressedMsgKey (checked by the sampling tests).
const sampledMsgKey = "sampled_msg"

// sampleState is the handler's sampling: nil sampler means off.
type sampleState struct {
	sampler Sampler
	report  func() error  // the bound sampler's Report, or nil
	counts  *sampleCounts // non-nil when sampler is
	// closing is set when Close begins. From then on records bypass the
	// Sampler and go to the bus, which refuses them once closed (ErrClosed,
	// counted in Stats.Dropped and DroppedClosed) rather than their being
	// refused quietly and counted as sampled. An atomic load per record,
	// with a Sampler only; a record that loads false just before Close sets
	// it is concurrent with Close, and sampling it is correct.
	closing atomic.Bool
}

// sampleCounts are the sampling counters. They live in their own
// allocation, padded, so that refusals (which add here) do not dirty the
// cache line holding the tree's fields, which every Handle reads.
type sampleCounts struct {
	_ [64]byte
	// sampled and markers are plain atomic adds: totals for Stats, with
	// nothing ordered after them.
	sampled atomic.Uint64
	markers atomic.Uint64
	_       [48]byte
}

// initSampling installs o.Sampler, with markers written through root (the
// handler NewHandler returns: no attributes, groups or name).
func (c *tree) initSampling(s Sampler, root *Handler) {
	if s == nil {
		return
	}
	c.sample.counts = &sampleCounts{}
	if m, ok := s.(MarkingSampler); ok {
		s = m.WithMarkers(root.writeSampleMarker)
	}
	if r, ok := s.(interface{ Report() error }); ok {
		c.sample.report = r.Report
	}
	c.sample.sampler = s
}

// refuse reports whether the Sampler drops a record, counting it if so.
// With no Sampler it is one load and compare (inlined).
func (s *sampleState) refuse(t time.Time, level slog.Level, msg, logger string) bool {
	return s.sampler != nil && s.refuseSampled(t, level, msg, logger)
}

func (s *sampleState) refuseSampled(t time.Time, level slog.Level, msg, logger string) bool {
	if s.closing.Load() || s.sampler.Sample(t, level, msg, logger) {
		return false
	}
	s.counts.sampled.Add(1) // the refusal path only
	return true
}

// flushMarkers writes the sampler's pending markers (Close calls it before
// closing the bus, so that nothing stays unreported).
func (s *sampleState) flushMarkers() {
	if s.report != nil {
		_ = s.report() // a marker's failure is counted by the bus like any record's
	}
}

// addStats fills the sampling fields of st.
func (s *sampleState) addStats(st *Stats) {
	if s.counts != nil {
		st.Sampled = s.counts.sampled.Load()
		st.SampleMarkers = s.counts.markers.Load()
	}
}

// writeSampleMarker writes one marker for n refused records of a key,
// bypassing the Sampler. h is the root handler.
func (h *Handler) writeSampleMarker(level slog.Level, msg, logger string, n uint64) error {
	m := h.Named(logger) // markers are rare: the derived encoder's allocation is fine
	r := slog.NewRecord(time.Now(), level, "suppressed "+plural.Count(n, "similar record", "similar records"), 0)
	r.AddAttrs(slog.String(sampledMsgKey, msg))
	h.tree.sample.counts.markers.Add(1)
	b := bufPool.Get().(*buffer)
	m.appendRecord(context.Background(), &r, nil, b) // no Context fields, no stack trace
	return m.enqueue(b, level, r.Message)
}
