package main

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/asyncbus/asyncbus/encode"
)

// parseLevel reads a level as the supported loggers write it, in any case:
// trace, debug, info, warn/warning, error/err, fatal (slog, asyncbus, zap,
// zerolog, logrus, phuslu/log), critical (Google Cloud's name for fatal),
// slog's offset forms ("INFO+2", "DEBUG-4"), zap's "Level(-2)" and, when
// bare (an unquoted token), pino's and bunyan's numbers 10, 20, ... 60
// (trace to fatal) or else a logr verbosity 0..127 (V(n) is slog level -n,
// as logrbridge maps it). exact is false for the names shown under a
// neighbour's name (zap's dpanic as ERROR; panic, alert and emergency as
// FATAL; notice as INFO+2), whose original is then kept as an attribute.
func parseLevel(s string, bare bool) (l slog.Level, exact, ok bool) {
	if l, ok := pinoLevel(s); bare && ok {
		return l, true, true
	}
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
	case strings.EqualFold(base, "fatal"), strings.EqualFold(base, "critical"):
		l = levelFatal
	case off == 0 && strings.EqualFold(base, "dpanic"):
		return slog.LevelError, false, true
	case off == 0 && (strings.EqualFold(base, "panic") || strings.EqualFold(base, "alert") || strings.EqualFold(base, "emergency")):
		return levelFatal, false, true
	case off == 0 && strings.EqualFold(base, "notice"):
		return slog.LevelInfo + 2, false, true
	default:
		return 0, false, false
	}
	return l + slog.Level(off), true, true
}

// pinoLevel reads pino's and bunyan's numeric levels: 10 trace, 20 debug,
// 30 info, 40 warn, 50 error, 60 fatal.
func pinoLevel(s string) (slog.Level, bool) {
	if len(s) != 2 || s[1] != '0' {
		return 0, false
	}
	switch s[0] {
	case '1':
		return levelTrace, true
	case '2':
		return slog.LevelDebug, true
	case '3':
		return slog.LevelInfo, true
	case '4':
		return slog.LevelWarn, true
	case '5':
		return slog.LevelError, true
	case '6':
		return levelFatal, true
	}
	return 0, false
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
