package encode

// Level names: slog's spellings, TRACE and FATAL, the lower-case logfmt
// forms, and the pre-encoded level field of the fast paths.

import (
	"log/slog"
	"strings"
)

// prepareConfig pre-encodes the "level" field of every tabled level for the
// fast path, through the general code so that the bytes are the same.
func (e *Encoder) prepareConfig() {
	c := e.c
	if c.rep != nil || c.format == Console || c.format.isZap() {
		return
	}
	for i := range c.levelTok {
		s := newState(e, nil, "")
		if c.preset != nil {
			s.appendKey(c.preset.levelKey)
		} else {
			s.appendKey(slog.LevelKey)
		}
		s.appendString(c.levelName(slog.Level(i + levelTabMin)))
		c.levelTok[i] = string(s.buf)
		s.free()
	}
}

const (
	levelTabMin = -24
	levelTabMax = 28
)

// levelNames caches slog's Level.String() for common levels (offset
// spellings such as "DEBUG-4" would otherwise allocate per record), plus a
// lower-case copy for logfmt.
var levelNames, levelNamesLower = func() (up, low [levelTabMax - levelTabMin + 1]string) {
	for i := range up {
		up[i] = slog.Level(i + levelTabMin).String()
		low[i] = strings.ToLower(up[i])
	}
	return
}()

// levelName returns the spelling of l for this encoder's format.
func (c *config) levelName(l slog.Level) string {
	lower := c.format == Logfmt
	if p := c.preset; p != nil {
		if p.gcp {
			return gcpSeverity(l)
		}
		lower = true
	}
	if !c.slogLevels {
		switch l {
		case LevelTrace:
			if lower {
				return "trace"
			}
			return "TRACE"
		case LevelFatal:
			if lower {
				return "fatal"
			}
			return "FATAL"
		}
	}
	if l >= levelTabMin && l <= levelTabMax {
		if lower {
			return levelNamesLower[l-levelTabMin]
		}
		return levelNames[l-levelTabMin]
	}
	if lower {
		return strings.ToLower(l.String())
	}
	return l.String()
}
