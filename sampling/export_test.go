package sampling

import (
	"log/slog"
	"time"
)

// SlotOf exposes the slot a key of h hashes to, so that tests can pick keys
// that do (or do not) collide instead of depending on the random seed.
func SlotOf(h *Handler, level slog.Level, msg string) uint64 {
	return h.s.index(level, msg, h.loggerHash)
}

// SetClock replaces s's wall clock (time.Now) with now, so that tests
// decide where "now" is for records stamped ahead of it. Call it before s
// is shared.
func SetClock(s *Sampler, now func() time.Time) { s.now = now }
