package sampling

import "log/slog"

// SlotOf exposes the slot a key of h hashes to, so that tests can pick keys
// that do (or do not) collide instead of depending on the random seed.
func SlotOf(h *Handler, level slog.Level, msg string) uint64 {
	return h.s.index(level, msg, h.loggerHash)
}
