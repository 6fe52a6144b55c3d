package journald

// maxFieldName is the journal's limit on a field name's length.
const maxFieldName = 64

// renamedPrefix is put before a name that cannot be used as it is: one
// that is empty, starts with a digit, or is a field this package writes
// itself (see reserved).
const renamedPrefix = "ATTR_"

// reserved are the fields every record of this package carries, and the
// fields of asyncbus.Options.Features.Sequence's numbers and drop markers
// (with Sequence or not: the ASYNCBUS_ namespace is the library's); an
// attribute mapped to one of them is renamed (ATTR_MESSAGE) rather than
// repeating it, which would give journalctl two messages or priorities,
// or let a record's attribute pass for a drop marker's count.
var reserved = [...]string{"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC", seqField, runField, droppedField}

// appendFieldName appends the journal field name of the attribute key
// under prefix (the mapped names of its groups, each followed by '_'):
// ASCII letters upper-cased, digits and '_' kept, every other character
// (one per rune; one per byte of invalid UTF-8) replaced by '_'; leading
// underscores removed (they mark the fields journald sets itself, which
// it refuses from clients); renamedPrefix put first when what is left is
// empty, starts with a digit or is reserved; cut to 64 bytes. The result
// always satisfies the journal's rules: [A-Z0-9_]{1,64}, not starting with
// '_' or a digit.
func appendFieldName(dst, prefix []byte, key string) []byte {
	start := len(dst)
	dst = append(dst, prefix...) // already mapped
	return fixFieldName(appendFieldChars(dst, key), start)
}

// fixFieldName applies the journal's rules to the mapped name at
// dst[start:] (see appendFieldName).
func fixFieldName(dst []byte, start int) []byte {
	name := dst[start:]
	lead := 0
	for lead < len(name) && name[lead] == '_' {
		lead++
	}
	if lead > 0 {
		dst = append(dst[:start], name[lead:]...) // overlapping copy: append uses memmove
		name = dst[start:]
	}
	if len(name) == 0 || (name[0] >= '0' && name[0] <= '9') || isReserved(name) {
		dst = append(dst, renamedPrefix...) // grow by the prefix, then shift the name up
		copy(dst[start+len(renamedPrefix):], name)
		copy(dst[start:], renamedPrefix)
	}
	if len(dst)-start > maxFieldName {
		dst = dst[:start+maxFieldName]
	}
	return dst
}

func isReserved(name []byte) bool {
	for _, r := range reserved {
		if string(name) == r { // compiled without converting
			return true
		}
	}
	return false
}

// appendGroupPrefix appends to prefix, the enclosing groups' prefix, the
// prefix of the attributes inside group name: its mapped name and '_'.
// Only the characters are mapped here; the journal's rules apply to the
// whole name (appendFieldName).
func appendGroupPrefix(prefix []byte, name string) []byte {
	return append(appendFieldChars(prefix, name), '_')
}

// appendFieldChars is appendFieldName's character mapping alone. Ranging
// over a string yields one rune per character and utf8.RuneError for each
// byte of an invalid sequence, so each becomes one '_'.
func appendFieldChars(dst []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			dst = append(dst, byte(r-'a'+'A'))
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			dst = append(dst, byte(r))
		default:
			dst = append(dst, '_')
		}
	}
	return dst
}
