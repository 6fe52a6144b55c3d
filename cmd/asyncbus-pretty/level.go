package main

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/asyncbus/asyncbus/encode"
)

// parseLevel reads a level as the supported loggers write it, in any case:
// trace, debug, info, warn/warning, error/err, fatal (slog, asyncbus, zap,
// zerolog), slog's offset forms ("INFO+2", "DEBUG-4"), zap's "Level(-2)"
// and, when bare (an unquoted token), a logr verbosity 0..127 (V(n) is
// slog level -n, as logrbridge maps it). exact is false for the names shown
// under a neighbour's name (zap's dpanic as ERROR, panic as FATAL), whose
// original is then kept as an attribute.
func parseLevel(s string, bare bool) (l slog.Level, exact, ok bool) {
	if bare && isSmallUint(s) {
		n, _ := strconv.Atoi(s)
		return slog.Level(-n), true, true
	}
	if len(s) > 7 && strings.EqualFold(s[:6], "level(") && s[len(s)-1] == ')' {
		n, err := strconv.Atoi(s[6 : len(s)-1])
		if err != nil || n < -1<<20 || n > 1<<20 {
			return 0, false, false
		}
		return slog.Level(n), true, true
	}
	base, off := s, 0
	if i := strings.IndexAny(s, "+-"); i > 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n > 1<<20 {
			return 0, false, false
		}
		base, off = s[:i], n
		if s[i] == '-' {
			off = -n
		}
	}
	switch {
	case strings.EqualFold(base, "trace"):
		l = levelTrace
	case strings.EqualFold(base, "debug"):
		l = slog.LevelDebug
	case strings.EqualFold(base, "info"):
		l = slog.LevelInfo
	case strings.EqualFold(base, "warn"), strings.EqualFold(base, "warning"):
		l = slog.LevelWarn
	case strings.EqualFold(base, "error"), strings.EqualFold(base, "err"):
		l = slog.LevelError
	case strings.EqualFold(base, "fatal"):
		l = levelFatal
	case off == 0 && strings.EqualFold(base, "dpanic"):
		return slog.LevelError, false, true
	case off == 0 && strings.EqualFold(base, "panic"):
		return levelFatal, false, true
	default:
		return 0, false, false
	}
	return l + slog.Level(off), true, true
}

// klogLevel is the level of a klog severity letter.
func klogLevel(c byte) (slog.Level, bool) {
	switch c {
	case 'I':
		return slog.LevelInfo, true
	case 'W':
		return slog.LevelWarn, true
	case 'E':
		return slog.LevelError, true
	case 'F':
		return levelFatal, true
	}
	return 0, false
}

const (
	levelTrace = encode.LevelTrace
	levelFatal = encode.LevelFatal
)
