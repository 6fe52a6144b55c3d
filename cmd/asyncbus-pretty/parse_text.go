package main

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parseText parses a line of key=value pairs separated by spaces: slog's
// Text, asyncbus's Text and Logfmt, logr funcr's text. A key is bare (up to
// '=') or quoted; a value is bare (up to the next space, possibly empty) or
// quoted. Quoted keys and values take Go's escapes (slog, klog) and JSON's
// (asyncbus logfmt). Every field goes through field; the line must be
// nothing but pairs.
func (p *parser) parseText(r *record, s string) bool {
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return true
		}
		key, j, ok := textKey(s, i)
		if !ok {
			return false
		}
		v, end, ok := textValue(s, j)
		if !ok {
			return false
		}
		p.field(r, key, v)
		i = end
	}
}

// textKey reads a key and its '=' at s[i], returning the index after '='.
func textKey(s string, i int) (string, int, bool) {
	if s[i] == '"' {
		key, j, ok := unquote(s, i)
		if !ok || j >= len(s) || s[j] != '=' {
			return "", 0, false
		}
		return key, j + 1, true
	}
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '=':
			return s[i:j], j + 1, j > i
		case ' ', '"', '\t':
			return "", 0, false
		}
	}
	return "", 0, false
}

// textValue reads a value at s[i], which ends at a space or the line's end.
func textValue(s string, i int) (scalar, int, bool) {
	if i < len(s) && s[i] == '"' {
		v, j, ok := unquote(s, i)
		if !ok || j < len(s) && s[j] != ' ' {
			return scalar{}, 0, false
		}
		return scalar{text: v, quoted: true}, j, true
	}
	j := i
	for j < len(s) && s[j] != ' ' {
		j++
	}
	return scalar{text: s[i:j]}, j, true
}

// unquote reads the double-quoted string at s[i] with Go's escapes (\a \b
// \f \n \r \t \v \\ \" \' \xHH \ooo \uHHHH \UHHHHHHHH) and JSON's (\/,
// \uHHHH surrogate pairs), returning its value and the index after the
// closing quote. A string without escapes is a substring of s.
func unquote(s string, i int) (string, int, bool) {
	i++
	j := i
	for j < len(s) && s[j] != '"' && s[j] != '\\' {
		j++
	}
	if j >= len(s) {
		return "", 0, false
	}
	if s[j] == '"' {
		return s[i:j], j + 1, true
	}
	b := make([]byte, 0, j-i+16)
	b = append(b, s[i:j]...)
	for j < len(s) {
		c := s[j]
		if c == '"' {
			return string(b), j + 1, true
		}
		if c != '\\' {
			b = append(b, c)
			j++
			continue
		}
		if j+1 < len(s) && s[j+1] == '/' {
			b = append(b, '/')
			j += 2
			continue
		}
		if j+1 < len(s) && s[j+1] == 'u' {
			r, n, ok := unicodeEscape(s, j)
			if !ok {
				return "", 0, false
			}
			b = utf8.AppendRune(b, r)
			j += n
			continue
		}
		v, mb, tail, err := strconv.UnquoteChar(s[j:], '"')
		if err != nil {
			return "", 0, false
		}
		if v < utf8.RuneSelf || mb {
			b = utf8.AppendRune(b, v)
		} else {
			b = append(b, byte(v)) // \xHH and \ooo are bytes
		}
		j = len(s) - len(tail)
	}
	return "", 0, false
}

// unicodeEscape reads the \uHHHH escape at s[i], with a following low
// surrogate when it is a high one (JSON's pairs); a lone surrogate is
// U+FFFD. It returns the rune and the length read.
func unicodeEscape(s string, i int) (rune, int, bool) {
	r, ok := hex4(s, i+2)
	if !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
		if r2, ok := hex4(s, i+8); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, true
			}
		}
	}
	return utf8.RuneError, 6, true
}
