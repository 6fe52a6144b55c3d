package encode

// Strings, numbers and MarshalJSON results as encoding/json writes them
// inside a slog.Any value.

import (
	"unicode/utf8"
)

// appendJSONAnyString appends s quoted as encoding/json quotes a string
// with HTML escaping off. It differs from slog's own string escaping
// (appendJSONString) in writing \b and \f as such.
func appendJSONAnyString(b []byte, s string) []byte { return appendQuotedJSON(b, s, true) }

// isValidJSONNumber reports whether s is a JSON number, as encoding/json
// checks a json.Number.
func isValidJSONNumber(s string) bool {
	end, ok := scanJSONNumber(s, 0)
	return ok && end == len(s)
}

// scanJSONNumber returns the end of the JSON number at s[i:].
func scanJSONNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return i, false
	case s[i] == '0':
		i++
	case '1' <= s[i] && s[i] <= '9':
		for i++; i < len(s) && isDigit(s[i]); i++ {
		}
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
		}
	}
	return i, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// maxCompactDepth bounds the nesting of a MarshalJSON result the plan
// checks itself; deeper ones are left to encoding/json (whose own limit is
// 10000).
const maxCompactDepth = 1000

// appendCompactJSON appends src, a MarshalJSON result, with the whitespace
// between its tokens removed, and reports whether that is what encoding/json
// writes for it: src is one valid JSON value whose strings are ASCII or
// valid UTF-8 without U+2028 and U+2029 (the Go releases differ on what
// they write for those; such results are left to encoding/json).
func appendCompactJSON(b []byte, src []byte) ([]byte, bool) {
	s := bytesToString(src)
	i := skipJSONSpace(s, 0)
	start := len(b)
	compact := i == 0
	end, clean, ok := scanJSONValue(s, i, 0)
	if !ok || skipJSONSpace(s, end) != len(s) {
		return b[:start], false
	}
	if compact && clean && end == len(s) {
		return append(b, src...), true // already compact: copied as is
	}
	return appendWithoutSpace(b, s[i:end]), true
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// scanJSONValue returns the end of the valid JSON value at s[i:]; clean is
// false when it has whitespace between tokens.
func scanJSONValue(s string, i, depth int) (end int, clean, ok bool) {
	if i >= len(s) {
		return i, false, false
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		if depth >= maxCompactDepth {
			return i, false, false
		}
		return scanJSONComposite(s, i, depth+1)
	case c == '"':
		end, ok = scanJSONString(s, i)
		return end, true, ok
	case c == '-' || isDigit(c):
		end, ok = scanJSONNumber(s, i)
		return end, true, ok
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s)-i >= len(lit) && s[i:i+len(lit)] == lit {
			return i + len(lit), true, true
		}
	}
	return i, false, false
}

// scanJSONComposite scans the object or array at s[i:].
func scanJSONComposite(s string, i, depth int) (end int, clean, ok bool) {
	obj := s[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	clean = true
	space := func(j int) int {
		k := skipJSONSpace(s, j)
		if k != j {
			clean = false
		}
		return k
	}
	i = space(i + 1)
	if i < len(s) && s[i] == closing {
		return i + 1, clean, true
	}
	for {
		if obj {
			if i >= len(s) || s[i] != '"' {
				return i, false, false
			}
			if i, ok = scanJSONString(s, i); !ok {
				return i, false, false
			}
			if i = space(i); i >= len(s) || s[i] != ':' {
				return i, false, false
			}
			i = space(i + 1)
		}
		var c bool
		if i, c, ok = scanJSONValue(s, i, depth); !ok {
			return i, false, false
		}
		clean = clean && c
		if i = space(i); i >= len(s) {
			return i, false, false
		}
		switch s[i] {
		case ',':
			i = space(i + 1)
		case closing:
			return i + 1, clean, true
		default:
			return i, false, false
		}
	}
}

// scanJSONString returns the end of the valid string at s[i:] (s[i] is
// '"'); non-ASCII must be valid UTF-8 other than U+2028 and U+2029.
func scanJSONString(s string, i int) (int, bool) {
	for i++; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i+1 >= len(s) {
				return i, false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(s)-i < 6 || !isHex4(s[i+2:i+6]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return i, false
			}
			i += size
		}
	}
	return i, false
}

func isHex4(s string) bool {
	for i := range 4 {
		c := s[i]
		if !isDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// appendWithoutSpace appends the valid JSON s without the whitespace
// outside its strings.
func appendWithoutSpace(b []byte, s string) []byte {
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			if c == '\\' {
				b = append(b, c, s[i+1])
				i++
				continue
			}
			if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	return b
}
