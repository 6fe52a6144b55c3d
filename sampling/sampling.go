// Package sampling thins out repetitive log records before they are
// encoded. A Handler wraps any slog.Handler (typically an
// *asyncbus.Handler) and, for each record below the exempt level, decides
// from the record's (level, message, logger) key whether to pass it on:
// the first First records of a key in each tick (one second by default)
// are kept, then every Thereafter-th. Dropped records never reach the
// wrapped handler, so they cost no encoding.
//
//	h, err := sampling.NewHandler(asyncbus.NewHandler(os.Stdout, nil), sampling.Config{First: 100, Thereafter: 100})
//	log := slog.New(h)
//
// Sampling is off unless such a Handler is installed. Records at or above
// Config.Exempt (Error by default) are never sampled.
//
// Memory is fixed: keys are hashed into a table of Config.Slots counters,
// each a lock-free atomic word, so the table never grows however many
// distinct messages are logged. Keys that collide in a slot share one
// counter: collisions only make sampling stricter (fewer records kept),
// never looser.
//
// Dropped records are reported in-band: once per tick, the first record
// handled in a new tick sweeps the table and, for each key that dropped
// records since the last sweep, writes one record "suppressed N similar
// records" at the key's level, with its message under "sampled_msg" and its
// logger name, through the wrapped handler of the Handler that dropped them
// (handlers sharing a Sampler each get their own keys' markers). Sampler.Report
// sweeps on demand (call it before closing the wrapped handler, so nothing
// stays unreported). Sampler.Stats counts kept, suppressed and reported
// records.
//
// Each slot remembers the keys it suppressed for, with their pending counts,
// in a few ways (slotWays). When more keys than that suppress records in one
// slot, the slot makes room by reporting one key's pending count at once, in
// a marker of its own: counts are never merged across keys, but keys that
// collide and keep alternating in one slot get more, smaller markers. More
// Slots make that rarer. A key is also told apart by the Handler (or
// WithMarkers binding) that logged it: handlers made by Named for every
// request are separate keys of their own.
//
// A Sampler can also be installed in the asyncbus handler itself, as
// asyncbus.Options.Sampler (it is an asyncbus.MarkingSampler): the
// handler then decides before encoding, counts refusals in its
// Stats.Sampled, writes the markers itself (never sampling them) and
// writes the pending ones when it closes.
//
// The configuration can be swapped at run time with Sampler.SetConfig; each
// record is decided under one consistent configuration.
//
// Time: windows follow the records' own times (a record without one is
// stamped with time.Now), but never run ahead of the wall clock by more
// than one tick. When a record's window is later than the last sweep's
// (the first record of each tick, or a record stamped ahead), the Sampler
// reads time.Now and counts the record in the tick after the clock's if
// its own is later still. One record stamped far in the future (a skewed
// remote clock passed on by a bridge, a bad caller) therefore delays the
// markers by at most one tick and merges its key's windows for at most
// two, instead of stopping both until the clock catches up.
package sampling

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus"
)

// Config says how a Sampler samples.
type Config struct {
	// Tick is the sampling window; zero means one second. Below a
	// millisecond is an error. Windows follow the records' own times, up
	// to one tick after the wall clock's: a record stamped later than that
	// (a skewed remote clock, a bad caller) counts in that window, so it
	// cannot move the sampling ahead of the clock (see the package doc).
	Tick time.Duration
	// First is how many records of each key are kept in each tick.
	First int
	// Thereafter: after the first First records of a key in a tick, every
	// Thereafter-th is kept; zero keeps none of them.
	Thereafter int
	// Exempt is the level from which records are never sampled; nil means
	// slog.LevelError. A *slog.LevelVar may be used. To sample every level,
	// use a level above all others, such as slog.Level(math.MaxInt).
	Exempt slog.Leveler
	// Slots is the size of the counter table, rounded up to a power of
	// two; zero means 1024 (64 KiB). More slots mean fewer collisions
	// between keys. It is fixed when the Sampler is made: SetConfig
	// accepts only zero or the same value.
	Slots int
	// Off passes every record on unsampled and uncounted, for switching
	// sampling off at run time without rebuilding loggers.
	Off bool
}

const (
	defaultTick  = time.Second
	defaultSlots = 1024
	maxSlots     = 1 << 20
)

// SuppressedMsgKey is the key under which a marker record carries the
// message of the records it accounts for.
const SuppressedMsgKey = "sampled_msg"

// config is a validated Config, swapped atomically as a whole.
type config struct {
	Config
	tickNs int64
	// gen changes whenever Tick changes: counters from another generation
	// count in windows of another length and are reset, not compared.
	gen uint8
	// exemptLevel is Exempt resolved once when it is a plain slog.Level,
	// so that the common case needs no interface call per record.
	exemptLevel slog.Level
	dynamic     bool
}

func (c *config) exempt() slog.Level {
	if c.dynamic {
		return c.Exempt.Level()
	}
	return c.exemptLevel
}

func validate(cfg Config) (*config, error) {
	c := &config{Config: cfg}
	switch {
	case cfg.Tick < 0:
		return nil, fmt.Errorf("sampling: negative Tick %v", cfg.Tick)
	case cfg.Tick == 0:
		c.Tick = defaultTick
	case cfg.Tick < time.Millisecond:
		return nil, fmt.Errorf("sampling: Tick %v is below the 1ms minimum", cfg.Tick)
	}
	c.tickNs = int64(c.Tick)
	if cfg.First < 0 || cfg.Thereafter < 0 {
		return nil, fmt.Errorf("sampling: negative First (%d) or Thereafter (%d)", cfg.First, cfg.Thereafter)
	}
	if cfg.First > 1<<32-2 || cfg.Thereafter > 1<<32-2 {
		return nil, fmt.Errorf("sampling: First (%d) or Thereafter (%d) above 2^32-2", cfg.First, cfg.Thereafter)
	}
	if cfg.Slots < 0 || cfg.Slots > maxSlots {
		return nil, fmt.Errorf("sampling: Slots %d outside 0..%d", cfg.Slots, maxSlots)
	}
	switch l := cfg.Exempt.(type) {
	case nil:
		c.exemptLevel = slog.LevelError
	case slog.Level:
		c.exemptLevel = l
	default:
		c.dynamic = true
	}
	return c, nil
}

// keyInfo is one key a slot suppresses records for, with its marker's
// target and the count of its suppressed records not yet reported. All but
// pending is immutable once published in a slot's way.
type keyInfo struct {
	level  slog.Level
	msg    string
	logger string
	to     *target
	// pending is the number of suppressed records not yet reported, with
	// closedBit set once the info has left its way (then its closer has
	// taken the count and reports it; later adds are ignored and retried
	// elsewhere). Each count is taken exactly once: by a sweep's And, which
	// keeps closedBit, or by the closer's Or, which sets it; both return
	// the old value, so whichever runs first takes the count, and a sweep
	// that sees closedBit in it leaves the count to the closer.
	pending atomic.Uint64
}

// closedBit marks a keyInfo's pending as closed (see keyInfo.pending).
const closedBit = 1 << 63

// target says where a key's marker goes: to the handler h (a Handler's
// Named handler, before WithAttrs/WithGroup), or to mark (a Sampler bound
// to an asyncbus.Handler by WithMarkers). One is made per Sampler.Handler,
// Handler.Named and Sampler.WithMarkers call, and keys compare targets by
// address (comparing slog.Handler interfaces can panic). Records refused by
// Sample called directly have no target: they are counted in
// Stats.Unmarked.
type target struct {
	h         slog.Handler
	addLogger bool // h does not write logger names itself
	mark      func(level slog.Level, msg, logger string, n uint64) error
}

// slotWays is how many keys one slot can hold pending counts for before a
// new one evicts (and reports) another: 4 fills the slot's cache line.
const slotWays = 4

// slot is one counter of the table. All fields are atomics touched by
// every goroutine that logs a key hashing here; they fill exactly one
// 64-byte cache line (the table is one allocation of 64-byte elements), so
// a decision dirties a single line.
type slot struct {
	// state packs gen (8 bits) | window (24 bits) | count (32 bits). It is
	// only changed by CompareAndSwap, so a window change and the count it
	// resets to are published together: no increment is lost or counted in
	// the wrong window.
	state atomic.Uint64
	// kept, suppressed and unmarked are cumulative totals for Stats; plain
	// atomic adds, since nothing is ordered after them.
	kept       atomic.Uint64
	suppressed atomic.Uint64
	unmarked   atomic.Uint64
	// ways hold the keys suppressed here. A way only changes by
	// CompareAndSwap to a freshly made keyInfo, so an info leaves a way at
	// most once and never comes back (no ABA): the goroutine whose swap
	// removed it is its only closer.
	ways [slotWays]atomic.Pointer[keyInfo]
}

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

// Config returns the configuration in force, with defaults filled in.
func (s *Sampler) Config() Config { return s.cfg.Load().Config }

// SetConfig swaps the configuration; records handled after it returns are
// decided under cfg. Counts already made in the current tick are kept
// (unless Tick changes, which starts new windows). An invalid cfg is
// rejected and the old one stays.
func (s *Sampler) SetConfig(cfg Config) error {
	c, err := validate(cfg)
	if err != nil {
		return err
	}
	if cfg.Slots != 0 && cfg.Slots != len(s.slots) {
		return fmt.Errorf("sampling: Slots cannot change from %d to %d at run time", len(s.slots), cfg.Slots)
	}
	c.Slots = len(s.slots)
	s.setMu.Lock()
	defer s.setMu.Unlock()
	old := s.cfg.Load()
	c.gen = old.gen
	if c.tickNs != old.tickNs {
		c.gen++
	}
	s.cfg.Store(c) // publishes the whole immutable config at once
	return nil
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

const (
	countBits  = 32
	countMask  = 1<<countBits - 1
	windowBits = 24
	windowMask = 1<<windowBits - 1
	tickMask   = 1<<56 - 1
)

// tickOf returns the number of the window t falls in (0 before 1970).
func (c *config) tickOf(t time.Time) uint64 {
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n / c.tickNs)
}

// count adds one record to sl in window tick and returns its number within
// the window (1 for the first). A record whose window is older than the
// slot's counts in the slot's window, so that windows never go backwards.
func (sl *slot) count(gen uint8, tick uint64) uint64 {
	win := tick & windowMask
	for {
		old := sl.state.Load()
		oldGen, oldWin, n := uint8(old>>56), old>>countBits&windowMask, old&countMask
		if oldGen == gen && old != 0 && int32(uint32(win-oldWin)<<8) <= 0 {
			// Same generation, window not later (signed 24-bit distance,
			// so the window number may wrap): count in the slot's window.
			win = oldWin
			if n < countMask {
				n++ // saturates: 2^32-1 records of one key in one tick
			}
		} else {
			n = 1
		}
		if sl.state.CompareAndSwap(old, uint64(gen)<<56|win<<countBits|n) {
			return n
		}
	}
}

// keep reports whether the n-th record of a window is kept under c.
func (c *config) keep(n uint64) bool {
	first := uint64(c.First)
	if n <= first {
		return true
	}
	return c.Thereafter > 0 && (n-first)%uint64(c.Thereafter) == 0
}

// decideAt counts a record of key (level, msg, logger) in window tick
// under c and reports whether it is kept. A refused record is counted
// pending for the key's marker, which goes to to (nil: Unmarked).
func (s *Sampler) decideAt(c *config, tick uint64, level slog.Level, msg, logger string, loggerHash uint64, to *target) bool {
	x := s.hash(level, msg, loggerHash)
	sl := &s.slots[x&s.mask]
	if c.keep(sl.count(c.gen, tick)) {
		sl.kept.Add(1)
		return true
	}
	sl.suppressed.Add(1)
	if to == nil {
		sl.unmarked.Add(1) // a total, like suppressed: no marker will take these
		return false
	}
	// Fast path: the key already has an open info in a way (the usual
	// case). Same atomics and reasoning as in addPending.
	for i := range sl.ways {
		if info := sl.ways[i].Load(); info != nil && info.to == to && info.level == level && info.msg == msg && info.logger == logger {
			if info.pending.Add(1)&closedBit == 0 {
				return false // counted while open: its sweep or closer takes it
			}
			break // closed meanwhile: the record is not counted there
		}
	}
	s.addPending(sl, x, level, msg, logger, to)
	return false
}

// addPending counts one suppressed record of a key in its keyInfo in sl,
// publishing the key in a way first if it has none there.
func (s *Sampler) addPending(sl *slot, x uint64, level slog.Level, msg, logger string, to *target) {
	var fresh *keyInfo
	for {
		var seen [slotWays]*keyInfo
		victim, score := 0, 3 // score of the victim way: 0 empty, 1 nothing pending, 2 busy
		matched := false
		for i := range sl.ways {
			info := sl.ways[i].Load() // may be stale: the CompareAndSwap below and closedBit catch changes
			seen[i] = info
			if info == nil {
				if score > 0 {
					victim, score = i, 0
				}
				continue
			}
			if info.to == to && info.level == level && info.msg == msg && info.logger == logger {
				// Add returns the new value: without closedBit the info was
				// still open when counted, so its sweep or closer (which
				// both take counts with one atomic read-modify-write) sees
				// this record. With it, the record is not counted: retry.
				if info.pending.Add(1)&closedBit == 0 {
					return
				}
				matched = true
				break
			}
			if score > 1 && info.pending.Load() == 0 { // a hint: counts added later are taken by the closer's Or
				victim, score = i, 1 // evicting it costs no marker
			}
		}
		if matched {
			continue // the way holds a newer info by now: look again
		}
		if score == 3 {
			victim = int(x>>62) & (slotWays - 1) // all busy: the key's own way, from bits the slot index does not use
		}
		if fresh == nil {
			fresh = &keyInfo{level: level, msg: msg, logger: logger, to: to}
			fresh.pending.Store(1) // before publication: the record is counted once the swap succeeds
		}
		old := seen[victim]
		// CompareAndSwap from what this loop saw: if the way changed, look
		// again (the key may be there now).
		if !sl.ways[victim].CompareAndSwap(old, fresh) {
			continue
		}
		if old != nil {
			// This goroutine removed old, so it alone closes it (ways never
			// reinstall an info): Or returns the count not yet taken by a
			// sweep, and later adds to old see closedBit and retry.
			if n := old.pending.Or(closedBit); n != 0 {
				_ = s.emit(old, n) // errors of a marker are the wrapped handler's to report
			}
		}
		return
	}
}

// hash returns the hash of a key: its low bits choose the slot, its top
// two the way an evicting key takes.
func (s *Sampler) hash(level slog.Level, msg string, loggerHash uint64) uint64 {
	x := maphash.String(s.seed, msg) ^ loggerHash ^ uint64(int64(level))*0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// index returns the slot of a key.
func (s *Sampler) index(level slog.Level, msg string, loggerHash uint64) uint64 {
	return s.hash(level, msg, loggerHash) & s.mask
}

// window returns the tick a record stamped t counts in under c, sweeping
// the table first if that tick is later than the last sweep's. A tick
// later than the one after the clock's is clamped to it: one record
// stamped far ahead would otherwise move the sweep tick and its slot's
// window ahead, and until the clock caught up no marker would be written
// and the key would keep First records in all instead of First per tick.
// The clock is read only when the record's tick is later than the last
// sweep's (the first records of each tick, and records stamped ahead):
// ticks not later than that have been clamped already, when it was stored,
// so every tick that reaches a counter or the sweep is at most one after
// the clock's (the wall clock going backwards aside).
func (s *Sampler) window(c *config, t time.Time) uint64 {
	if t.IsZero() {
		t = s.now()
	}
	tick := c.tickOf(t)
	last := s.lastSweep.Load()
	if uint8(last>>56) == c.gen && tick&tickMask <= last&tickMask {
		return tick // the common case: no clock read, no sweep
	}
	if limit := c.tickOf(s.now()) + 1; tick > limit {
		tick = limit
	}
	if s.lastSweep.CompareAndSwap(last, uint64(c.gen)<<56|tick&tickMask) {
		// Only the winner sweeps: one sweep per tick however many
		// goroutines cross the boundary. A loser's tick is swept by a
		// later record if the winner's was earlier.
		_ = s.sweep() // errors of a marker are the wrapped handler's to report
	}
	return tick
}

// sweep writes one marker per key with pending suppressed records.
func (s *Sampler) sweep() error {
	var errs []error
	for i := range s.slots {
		sl := &s.slots[i]
		for w := range sl.ways {
			info := sl.ways[w].Load() // if swapped out meanwhile, its And below sees closedBit
			if info == nil {
				continue
			}
			if p := info.pending.Load(); p == 0 || p&closedBit != 0 { // a hint: a count it misses waits for the next sweep
				continue // read first: a sweep must not dirty idle slots' lines
			}
			// And keeps closedBit and takes the count; its old value says
			// whether the closer's Or came first (then the count is the
			// closer's to report). Exactly one sweeper or closer takes each.
			n := info.pending.And(closedBit)
			if n == 0 || n&closedBit != 0 {
				continue
			}
			if err := s.emit(info, n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// emit writes the marker for n records suppressed under info.
func (s *Sampler) emit(info *keyInfo, n uint64) error {
	s.markers.Add(1)
	s.reported.Add(n)
	to := info.to
	if to.mark != nil {
		// The asyncbus.Handler writes the marker itself, unsampled.
		return to.mark(info.level, info.msg, info.logger, n)
	}
	r := slog.NewRecord(time.Now(), info.level, fmt.Sprintf("suppressed %d similar records", n), 0)
	r.AddAttrs(slog.String(SuppressedMsgKey, info.msg))
	if to.addLogger {
		r.AddAttrs(slog.String(DefaultLoggerKey, info.logger))
	}
	// Background: the marker stands for many calls, and must not carry the
	// context fields (trace IDs, request attrs) of whichever call swept.
	return to.h.Handle(context.Background(), r)
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
// Options.Sampler is s): it decides as s does, sharing s's counters and
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
