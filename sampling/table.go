package sampling

// The counter table: a key's slot, its per-tick window count and the
// decision to keep a record, and the clock that moves the windows on.

import (
	"hash/maphash"
	"log/slog"
	"sync/atomic"
	"time"
)

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
