package encode

// The Console format's header (clock, coloured level, short source,
// message) and terminal-safety checks.

import (
	"log/slog"
	"strconv"
	"unicode"
	"unicode/utf8"
)

const (
	ansiReset = "\x1b[0m"
	ansiDim   = "\x1b[2m"
)

func levelColor(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "\x1b[90m" // TRACE: grey
	case l < slog.LevelInfo:
		return "\x1b[36m" // DEBUG: cyan
	case l < slog.LevelWarn:
		return "\x1b[32m" // INFO: green
	case l < slog.LevelError:
		return "\x1b[33m" // WARN: yellow
	case l < LevelFatal:
		return "\x1b[31m" // ERROR: red
	default:
		return "\x1b[1;35m" // FATAL: bold magenta
	}
}

// consoleHeader writes "15:04:05.000 LEVEL source message".
func (s *state) consoleHeader(r slog.Record) {
	c := s.c
	sp := ""
	if !r.Time.IsZero() {
		if c.color {
			s.buf = append(s.buf, ansiDim...)
		}
		s.buf = appendClock(s.buf, r.Time)
		if c.color {
			s.buf = append(s.buf, ansiReset...)
		}
		sp = " "
	}
	s.buf = append(s.buf, sp...)
	name := c.levelName(r.Level)
	if c.color {
		s.buf = append(s.buf, levelColor(r.Level)...)
	}
	s.buf = append(s.buf, name...)
	if c.color {
		s.buf = append(s.buf, ansiReset...)
	}
	for i := len(name); i < 5; i++ {
		s.buf = append(s.buf, ' ')
	}
	if c.addSource {
		if src := sourceFor(r.PC); src != nil {
			s.buf = append(s.buf, ' ')
			if c.color {
				s.buf = append(s.buf, ansiDim...)
			}
			s.appendTextString(src.short)
			if c.color {
				s.buf = append(s.buf, ansiReset...)
			}
		}
	}
	if r.Message == "" {
		// Drop the level padding rather than end the line in spaces.
		for len(s.buf) > 0 && s.buf[len(s.buf)-1] == ' ' {
			s.buf = s.buf[:len(s.buf)-1]
		}
	} else {
		s.buf = append(s.buf, ' ')
		if consoleSafe(r.Message) {
			s.buf = append(s.buf, r.Message...)
		} else {
			s.buf = strconv.AppendQuote(s.buf, r.Message)
		}
	}
	s.sep = " "
}

// consoleSafe reports whether msg can be written raw to a terminal: valid
// UTF-8 with no control or non-printing characters other than plain spaces.
func consoleSafe(msg string) bool {
	for i := 0; i < len(msg); {
		b := msg[i]
		if b < utf8.RuneSelf {
			if b < ' ' || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(msg[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}
