package encode

// The zap formats' building blocks: separators, keys, strings, floats,
// times and level names, byte for byte as zap's encoders write them.

import (
	"log/slog"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendZapSep is zap's addElementSeparator: a ',' (and a space when
// spaced) unless b is empty or ends with an opening or a separator.
func appendZapSep(b []byte, spaced bool) []byte {
	if len(b) == 0 {
		return b
	}
	switch b[len(b)-1] {
	case '{', '[', ':', ',', ' ':
		return b
	}
	if spaced {
		return append(b, ',', ' ')
	}
	return append(b, ',')
}

// appendZapKey writes the separator, the quoted key and ':' (": " when
// spaced), as zap's addKey.
func appendZapKey(b []byte, key string, spaced bool) []byte {
	b = appendZapSep(b, spaced)
	b = appendZapString(b, key)
	if spaced {
		return append(b, ':', ' ')
	}
	return append(b, ':')
}

// appendZapString writes s quoted and escaped as zap's JSON encoder does.
func appendZapString(b []byte, s string) []byte {
	b = append(b, '"')
	if jsonClean(s) { // printable ASCII without '"' and '\\': zap copies it too
		b = append(b, s...)
	} else {
		b = appendZapEscaped(b, s)
	}
	return append(b, '"')
}

// appendZapEscaped escapes s like zap's safeAddString: '\\' and '"'
// backslashed, \n \r \t, other bytes below 0x20 as \u00XX, each byte of
// invalid UTF-8 as \ufffd; everything else (0x7f, U+2028, '<') is copied.
func appendZapEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '\\' && c != '"' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendZapFloat is zap's JSON float: shortest 'f' formatting, NaN and the
// infinities as the strings "NaN", "+Inf" and "-Inf".
func appendZapFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendZapTime writes t with z's time encoder: as a JSON value, or, for
// the console's time column (z.console), as fmt.Fprint prints the value
// the encoder produced (strings unquoted, floats in %v form).
func appendZapTime(b []byte, t time.Time, z zapFmt) []byte {
	switch z.time {
	case ZapTimeEpoch, ZapTimeMillis:
		unit := float64(time.Second)
		if z.time == ZapTimeMillis {
			unit = float64(time.Millisecond)
		}
		f := float64(t.UnixNano()) / unit
		if z.console {
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
		return appendZapFloat(b, f)
	case ZapTimeNanos:
		return appendInt(b, t.UnixNano())
	}
	if !z.console {
		b = append(b, '"')
	}
	var tmp secStamp
	c := stamp(t, &tmp)
	switch {
	case c == nil: // a year outside [0,9999] or an offset of 100 h or more: let package time format it
		layout := time.RFC3339
		switch z.time {
		case ZapTimeRFC3339Nano:
			layout = time.RFC3339Nano
		case ZapTimeISO8601:
			layout = "2006-01-02T15:04:05.000Z0700"
		}
		b = t.AppendFormat(b, layout)
	case z.time == ZapTimeISO8601:
		b = append(b, c.date()...)
		b = appendMillis(b, t)
		if c.zlen == 6 { // "+07:00" becomes "+0700"
			b = append(b, c.zoneq[:3]...)
			b = append(b, c.zoneq[4:6]...)
		} else {
			b = append(b, c.zoneq[:c.zlen]...)
		}
	default:
		b = append(b, c.date()...)
		if z.time == ZapTimeRFC3339Nano {
			b = appendNanos(b, t.Nanosecond())
		}
		b = append(b, c.zoneq[:c.zlen]...)
	}
	if !z.console {
		b = append(b, '"')
	}
	return b
}

// appendZapLevel writes l's zap name in z's spelling (lower case, or
// capital for the console encoding), mapping slog levels as zapslog does,
// or below Info as zapr's Handle does with z.logr, and with z.levels zap's
// DPanic and Panic levels as themselves.
func appendZapLevel(b []byte, l slog.Level, z zapFmt) []byte {
	var name string
	capital := z.console
	switch {
	case l >= LevelFatal:
		name = "fatal"
	case z.levels && l >= slog.LevelError+2:
		name = "panic"
	case z.levels && l == slog.LevelError+1:
		name = "dpanic"
	case l >= slog.LevelError:
		name = "error"
	case l >= slog.LevelWarn:
		name = "warn"
	case l >= slog.LevelInfo:
		name = "info"
	case !z.logr || l == -1:
		name = "debug"
	default:
		// zapcore.Level is an int8; zapr caps V levels at 127.
		n := max(int64(l), -127)
		if capital {
			b = append(b, "LEVEL("...)
		} else {
			b = append(b, "Level("...)
		}
		b = appendInt(b, n)
		return append(b, ')')
	}
	if !capital {
		return append(b, name...)
	}
	for i := 0; i < len(name); i++ {
		b = append(b, name[i]-'a'+'A')
	}
	return b
}
