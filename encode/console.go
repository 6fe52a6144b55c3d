package encode

// The Console format's header (clock, coloured level, short source,
// message) and terminal-safety checks.

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
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
//
// With ReplaceAttr, each built-in goes through it first, exactly as in slog
// (time, level, source, msg; groups nil; the time rounded, the level as a
// slog.Level, the source as a *slog.Source): an empty result removes the
// column; a result of the built-in's own kind fills the column (a renamed
// key is not shown, the column says what it is); any other result (another
// kind, a group) is written as key=value attributes in the column's place,
// as Text would write them.
func (s *state) consoleHeader(r slog.Record) {
	c := s.c
	s.sep = ""
	if !r.Time.IsZero() {
		if c.rep == nil {
			s.consoleClock(r.Time)
		} else if a := s.replace(slog.Time(slog.TimeKey, r.Time.Round(0))); a.Value.Kind() == slog.KindTime {
			s.consoleClock(a.Value.Time())
		} else {
			s.appendResolved(a, 0)
		}
	}
	if c.rep == nil {
		s.consoleLevel(r.Level)
	} else {
		a := s.replace(slog.Any(slog.LevelKey, r.Level))
		l, ok := slog.Level(0), false
		if a.Value.Kind() == slog.KindAny {
			l, ok = a.Value.Any().(slog.Level)
		}
		if ok {
			s.consoleLevel(l)
		} else {
			s.appendResolved(a, 0)
		}
	}
	if c.addSource {
		if c.rep == nil {
			if src := sourceFor(r.PC); src != nil {
				s.consoleColumn(src.short, true)
			}
		} else {
			src := r.Source()
			if src == nil {
				src = &slog.Source{}
			}
			a := s.replace(slog.Any(slog.SourceKey, src))
			var rs *slog.Source
			ok := false
			if a.Value.Kind() == slog.KindAny {
				rs, ok = a.Value.Any().(*slog.Source)
			}
			if ok {
				if rs != nil && *rs != (slog.Source{}) {
					s.consoleColumn(shortFile(rs.File)+":"+strconv.Itoa(rs.Line), true)
				}
			} else {
				s.appendResolved(a, 0)
			}
		}
	}
	msg := slog.StringValue(r.Message)
	if c.rep != nil {
		a := s.replace(slog.String(slog.MessageKey, r.Message))
		if a.Value.Kind() != slog.KindString {
			s.appendResolved(a, 0)
			msg = slog.StringValue("")
		} else {
			msg = a.Value
		}
	}
	if m := msg.String(); m != "" {
		s.buf = append(s.buf, s.sep...)
		if consoleSafe(m) {
			s.buf = append(s.buf, m...)
		} else {
			s.buf = strconv.AppendQuote(s.buf, m)
		}
	}
	// The level's padding only lines up a source or message that follows.
	s.sep = " "
}

// consoleClock writes the time column.
func (s *state) consoleClock(t time.Time) {
	s.buf = append(s.buf, s.sep...)
	if s.c.color {
		s.buf = append(s.buf, ansiDim...)
	}
	s.buf = appendClock(s.buf, t)
	if s.c.color {
		s.buf = append(s.buf, ansiReset...)
	}
	s.sep = " "
}

// consoleLevel writes the level column, padded to five characters before
// whatever column follows.
func (s *state) consoleLevel(l slog.Level) {
	s.buf = append(s.buf, s.sep...)
	name := s.c.levelName(l)
	if s.c.color {
		s.buf = append(s.buf, levelColor(l)...)
	}
	s.buf = append(s.buf, name...)
	if s.c.color {
		s.buf = append(s.buf, ansiReset...)
	}
	s.sep = levelPad[min(len(name), 5):]
}

// levelPad[n:] is the separator after a level name of n <= 5 bytes.
const levelPad = "      "

// consoleColumn writes a string column (source), dimmed if dim.
func (s *state) consoleColumn(v string, dim bool) {
	s.buf = append(s.buf, s.sep...)
	if dim && s.c.color {
		s.buf = append(s.buf, ansiDim...)
	}
	s.buf = appendConsoleString(s.buf, v)
	if dim && s.c.color {
		s.buf = append(s.buf, ansiReset...)
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

// appendConsoleString appends s as slog's TextHandler would, and quoted
// (strconv.Quote) also when it holds DEL, which slog writes raw: no C0, DEL,
// C1 or invalid UTF-8 byte reaches the terminal unescaped.
func appendConsoleString(b []byte, s string) []byte {
	if strings.IndexByte(s, 0x7f) >= 0 {
		return strconv.AppendQuote(b, s)
	}
	return appendTextValueString(b, s)
}

// appendConsoleKey appends prefix+key as appendTextKey does, and quoted
// also when either holds DEL.
func appendConsoleKey(b []byte, prefix, key string) []byte {
	if strings.IndexByte(prefix, 0x7f) < 0 && strings.IndexByte(key, 0x7f) < 0 {
		return appendTextKey(b, prefix, key)
	}
	b = append(b, '"')
	b = appendQuotedInner(b, prefix)
	b = appendQuotedInner(b, key)
	return append(b, '"')
}
