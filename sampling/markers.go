package sampling

// The markers: the keys a slot holds suppressed counts for, where their
// markers go, and the sweeps and evictions that write them.

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// SuppressedMsgKey is the key under which a marker record carries the
// message of the records it accounts for.
const SuppressedMsgKey = "sampled_msg"

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
	r := slog.NewRecord(time.Now(), info.level, "suppressed "+plural.Count(n, "similar record", "similar records"), 0)
	r.AddAttrs(slog.String(SuppressedMsgKey, info.msg))
	if to.addLogger {
		r.AddAttrs(slog.String(DefaultLoggerKey, info.logger))
	}
	// Background: the marker stands for many calls, and must not carry the
	// context fields (trace IDs, request attrs) of whichever call swept.
	return to.h.Handle(context.Background(), r)
}
