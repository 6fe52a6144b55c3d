package journald

import (
	"encoding/binary"
	"fmt"
)

// field is one field of a parsed entry.
type field struct {
	Name, Value string
	Binary      bool // sent in the binary-length form
}

// parseEntry parses one datagram of the journal's native protocol byte for
// byte, as journald does, and refuses anything journald would not take:
// a name breaking the journal's rules, a length running past the end, a
// binary value not followed by '\n', a missing final '\n'.
func parseEntry(b []byte) ([]field, error) {
	var fs []field
	for len(b) > 0 {
		nl, eq := -1, -1
		for i, c := range b {
			if c == '=' && eq < 0 {
				eq = i
			}
			if c == '\n' {
				nl = i
				break
			}
		}
		if nl < 0 {
			return fs, fmt.Errorf("unterminated field %q", b)
		}
		if eq >= 0 && eq < nl {
			name := string(b[:eq])
			if !validName(name) {
				return fs, fmt.Errorf("invalid field name %q", name)
			}
			fs = append(fs, field{Name: name, Value: string(b[eq+1 : nl])})
			b = b[nl+1:]
			continue
		}
		name := string(b[:nl])
		if !validName(name) {
			return fs, fmt.Errorf("invalid field name %q", name)
		}
		b = b[nl+1:]
		if len(b) < 8 {
			return fs, fmt.Errorf("field %s: no length", name)
		}
		n := binary.LittleEndian.Uint64(b)
		b = b[8:]
		if n > uint64(len(b)) || n == uint64(len(b)) || b[n] != '\n' {
			return fs, fmt.Errorf("field %s: length %d does not end in a newline within %d bytes", name, n, len(b))
		}
		fs = append(fs, field{Name: name, Value: string(b[:n]), Binary: true})
		b = b[n+1:]
	}
	return fs, nil
}

// validName is journald's journal_field_valid for client fields, written
// out independently of the package's mapping: 1 to 64 of A-Z, 0-9 and
// '_', not starting with '_' or a digit.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '_' || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// get returns the values of the fields called name, in order.
func get(fs []field, name string) []string {
	var vs []string
	for _, f := range fs {
		if f.Name == name {
			vs = append(vs, f.Value)
		}
	}
	return vs
}
