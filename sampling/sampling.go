package sampling

import (
	"hash/maphash"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// Stats counts a Sampler's decisions since it was made. Records at or above
// the exempt level, or handled while Off, are passed on uncounted. Once
// logging has stopped and Report has run, Suppressed == Reported + Unmarked.
type Stats struct {
	// Kept is how many sampled records were passed on.
	Kept uint64
	// Suppressed is how many records sampling dropped.
	Suppressed uint64
	// Markers is how many "suppressed N similar records" records were written.
	Markers uint64
	// Reported is the sum of N over those markers.
	Reported uint64
	// Unmarked is how many of the suppressed records were refused by
	// Sample called directly: no marker reports them.
	Unmarked uint64
}

// Sampler holds the counter table and configuration shared by a Handler and
// the handlers derived from it.
type Sampler struct {
	cfg   atomic.Pointer[config] // loaded once per record: one consistent config per decision
	setMu sync.Mutex             // serialises SetConfig writers only; readers never lock
	seed  maphash.Seed
	slots []slot
	mask  uint64
	// lastSweep is gen<<56 | tick of the last lazy sweep. A goroutine that
	// sees a later tick CompareAndSwaps it, and only the winner sweeps, so
	// one sweep runs per tick however many goroutines cross the boundary.
	// Every tick stored here has been clamped by window, so it is at most
	// one tick after the clock's when stored.
	lastSweep atomic.Uint64
	// now is the wall clock (time.Now; tests set a fake one before s is
	// shared). It is read by window only for a record whose tick is later
	// than lastSweep's, and for a record without a time.
	now func() time.Time
	// markers and reported are totals for Stats; a marker is rare (at
	// most one per slot per tick), so these shared counters see little
	// contention.
	markers  atomic.Uint64
	reported atomic.Uint64
}

// NewSampler returns a Sampler for cfg, or an error for an invalid Config.
func NewSampler(cfg Config) (*Sampler, error) {
	c, err := validate(cfg)
	if err != nil {
		return nil, err
	}
	n := cfg.Slots
	if n == 0 {
		n = defaultSlots
	}
	n = 1 << bits.Len(uint(n-1)) // round up to a power of two
	c.Slots = n
	s := &Sampler{seed: maphash.MakeSeed(), slots: make([]slot, n), mask: uint64(n - 1), now: time.Now}
	s.cfg.Store(c) // before s is shared
	return s, nil
}

// Stats returns the counters. It reads every slot (O(Slots)), and while
// records are being logged the fields are read one after another, not as
// one snapshot.
func (s *Sampler) Stats() Stats {
	var st Stats
	for i := range s.slots {
		st.Kept += s.slots[i].kept.Load()
		st.Suppressed += s.slots[i].suppressed.Load()
		st.Unmarked += s.slots[i].unmarked.Load()
	}
	st.Markers = s.markers.Load()
	st.Reported = s.reported.Load()
	return st
}

// Report writes a marker record now for every key with suppressed records
// not yet reported, and returns the wrapped handlers' errors, joined.
func (s *Sampler) Report() error {
	return s.sweep()
}

// Sample reports whether a record of (level, msg, logger) at time t is
// kept, counting it as Handler.Handle does (records at or above the exempt
// level, and all records while Off, are kept uncounted). It implements
// asyncbus.Sampler; the handler uses WithMarkers, so that the records it
// refuses are reported by markers in its own output. Records refused by
// Sample called directly get no marker: they are counted in
// Stats.Suppressed and Stats.Unmarked.
func (s *Sampler) Sample(t time.Time, level slog.Level, msg, logger string) bool {
	return s.sample(t, level, msg, logger, nil)
}

func (s *Sampler) sample(t time.Time, level slog.Level, msg, logger string, to *target) bool {
	c := s.cfg.Load() // the configuration for this whole decision
	if c.Off {
		return true
	}
	tick := s.window(c, t)
	return level >= c.exempt() || s.decideAt(c, tick, level, msg, logger, s.nameHash(logger), to)
}

// WithMarkers returns s bound to one asyncbus.Handler (which calls it when
// Options.Features.Sampler is s): it decides as s does, sharing s's counters and
// configuration, and reports the records it refuses by calling mark with
// the key and the count, once per key per tick (the first record of a new
// tick sweeps, as for a Handler) and on Report, which the handler calls
// when it closes. mark writes the marker itself, unsampled. It implements
// asyncbus.MarkingSampler.
func (s *Sampler) WithMarkers(mark func(level slog.Level, msg, logger string, n uint64) error) asyncbus.Sampler {
	return &boundSampler{s: s, to: &target{mark: mark}}
}

// The asyncbus handler binds a Sampler with WithMarkers to write its markers.
var _ asyncbus.MarkingSampler = (*Sampler)(nil)

// boundSampler is a Sampler bound by WithMarkers.
type boundSampler struct {
	s  *Sampler
	to *target // made once per binding: its address tells its keys apart
}

// Sample decides as Sampler.Sample does, with markers going to mark.
func (b *boundSampler) Sample(t time.Time, level slog.Level, msg, logger string) bool {
	return b.s.sample(t, level, msg, logger, b.to)
}

// Report writes the pending markers of the whole Sampler now.
func (b *boundSampler) Report() error { return b.s.Report() }
