package levelhttp

import (
	"fmt"
	"strconv"
)

// member is one key and value of the body's object, each as raw JSON.
type member struct{ key, value []byte }

// jsonScanner checks that a PUT body is one JSON object and collects its
// members. Its errors give the byte offset in the body and what was
// expected there, in the same words on every Go release.
type jsonScanner struct {
	b []byte
	i int // offset of the next byte to read
}

// scanObject returns the members of body, which must hold exactly one JSON
// object (spaces around it aside), or an error saying where and why not.
func scanObject(body []byte) ([]member, error) {
	s := jsonScanner{b: body}
	s.skipSpace()
	var members []member
	if err := s.object(&members); err != nil {
		return nil, err
	}
	s.skipSpace()
	if s.i < len(s.b) {
		return nil, fmt.Errorf("trailing data after the object at offset %d", s.i)
	}
	return members, nil
}

// fail reports the byte at s.i, or the body's end, where want was expected.
func (s *jsonScanner) fail(want string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("the body ends at offset %d, inside the object (want %s)", s.i, want)
	}
	c := s.b[s.i]
	char := fmt.Sprintf("byte 0x%02x", c)
	if c < 0x80 {
		char = "character " + strconv.QuoteRune(rune(c))
	}
	return fmt.Errorf("invalid %s at offset %d (want %s)", char, s.i, want)
}

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next reports whether the byte at s.i is c, and if so moves past it.
func (s *jsonScanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object scans an object at s.i; members, when not nil, collects its
// members (nested objects pass nil).
func (s *jsonScanner) object(members *[]member) error {
	if !s.next('{') {
		return s.fail("'{'")
	}
	s.skipSpace()
	if s.next('}') {
		return nil
	}
	want := "a key or '}'"
	for {
		s.skipSpace()
		start := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.fail(want)
		}
		if err := s.str(); err != nil {
			return err
		}
		key := s.b[start:s.i]
		s.skipSpace()
		if !s.next(':') {
			return s.fail("':'")
		}
		s.skipSpace()
		start = s.i
		if err := s.value(); err != nil {
			return err
		}
		if members != nil {
			*members = append(*members, member{key: key, value: s.b[start:s.i]})
		}
		s.skipSpace()
		if s.next('}') {
			return nil
		}
		if !s.next(',') {
			return s.fail("',' or '}'")
		}
		want = "a key"
	}
}

// value scans any JSON value at s.i.
func (s *jsonScanner) value() error {
	if s.i >= len(s.b) {
		return s.fail("a value")
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(nil)
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("a value")
}

func (s *jsonScanner) array() error {
	s.i++ // '['
	s.skipSpace()
	if s.next(']') {
		return nil
	}
	for {
		s.skipSpace()
		if err := s.value(); err != nil {
			return err
		}
		s.skipSpace()
		if s.next(']') {
			return nil
		}
		if !s.next(',') {
			return s.fail("',' or ']'")
		}
	}
}

// str scans a string at s.i, which is '"'.
func (s *jsonScanner) str() error {
	s.i++
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c < 0x20:
			return s.fail(`an escape for a control character in a string`)
		case c == '\\':
			s.i++
			if err := s.escape(); err != nil {
				return err
			}
		default:
			s.i++
		}
	}
	return s.fail(`'"' ending the string`)
}

// escape scans the rest of an escape sequence, after its backslash.
func (s *jsonScanner) escape() error {
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i++
			return nil
		case 'u':
			s.i++
			for range 4 {
				if s.i >= len(s.b) || !isHex(s.b[s.i]) {
					return s.fail(`a hex digit of a \u escape`)
				}
				s.i++
			}
			return nil
		}
	}
	return s.fail(`an escape: one of "\/bfnrt or u`)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number scans a number at s.i: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?.
func (s *jsonScanner) number() error {
	s.next('-')
	if !s.next('0') {
		if err := s.digits(); err != nil {
			return err
		}
	}
	if s.next('.') {
		if err := s.digits(); err != nil {
			return err
		}
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		return s.digits()
	}
	return nil
}

// digits scans one or more decimal digits.
func (s *jsonScanner) digits() error {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == start {
		return s.fail("a digit")
	}
	return nil
}

// literal scans lit (true, false or null) at s.i.
func (s *jsonScanner) literal(lit string) error {
	for k := range len(lit) {
		if !s.next(lit[k]) {
			return s.fail(fmt.Sprintf("%q of %s", lit[k], lit))
		}
	}
	return nil
}
