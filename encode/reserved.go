package encode

// Reserved keys (Options.SequenceKeys): with Options.UniqueKeys, the
// top-level keys "seq" and "run" belong to the numbers a handler writes
// in front of the line (asyncbus's Options.Features.Sequence). An
// attribute under one of them keeps its value under the key with "_"
// appended (seq_, run_), so the line holds each key once and the numbers
// are the ones a reader finds.

// isReservedKey reports whether key is one of the numbers' keys.
func isReservedKey(key []byte) bool { return string(key) == "seq" || string(key) == "run" }

// renameReservedJSON appends '_' to each top-level key of the JSON object
// b[open:end] (b[open] == '{', b[end-1] == '}') that is reserved. It
// returns b, the object's new end and whether it renamed a key. It reads
// the JSON this package writes, compact or with the zap console's spaces;
// on anything else it stops and renames no further.
func renameReservedJSON(b []byte, open, end int) ([]byte, int, bool) {
	renamed := false
	p := open + 1
	for {
		p = skipSpace(b, p, end)
		if p >= end || b[p] != '"' {
			return b, end, renamed
		}
		q := skipJSONString(b, p, end)
		if q < 0 {
			return b, end, renamed
		}
		if isReservedKey(b[p+1 : q-1]) {
			b = append(b, 0)
			copy(b[q:], b[q-1:])
			b[q-1] = '_'
			q, end, renamed = q+1, end+1, true
		}
		p = skipSpace(b, q, end)
		if p >= end || b[p] != ':' {
			return b, end, renamed
		}
		p = skipJSONValue(b, skipSpace(b, p+1, end), end)
		if p < 0 {
			return b, end, renamed
		}
		p = skipSpace(b, p, end)
		if p >= end || b[p] != ',' {
			return b, end, renamed
		}
		p++
	}
}

// skipJSONString returns the index after the JSON string opening at b[p],
// or -1 if it does not end before end.
func skipJSONString(b []byte, p, end int) int {
	for p++; p < end; p++ {
		switch b[p] {
		case '\\':
			p++
		case '"':
			return p + 1
		}
	}
	return -1
}

// skipJSONValue returns the index after the JSON value at b[p], or -1 if
// it does not end before end.
func skipJSONValue(b []byte, p, end int) int {
	depth := 0
	for p < end {
		switch b[p] {
		case '"':
			if p = skipJSONString(b, p, end); p < 0 {
				return -1
			}
			if depth == 0 {
				return p
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return p
			}
			if depth--; depth == 0 {
				return p + 1
			}
		case ',', ' ':
			if depth == 0 {
				return p
			}
		}
		p++
	}
	return -1
}

// renameReservedTokens appends '_' to the key of each key=value token of
// b[from:len(b)-1] (b ends in '\n') whose key is reserved, as
// uniqueTokens reads tokens. It reports whether it renamed a key.
func renameReservedTokens(b []byte, from int) ([]byte, bool) {
	renamed := false
	for p := from; p < len(b)-1; {
		if b[p] == ' ' {
			p++
			continue
		}
		start := p
		keyEnd := -1
		for p < len(b)-1 && b[p] != ' ' {
			switch b[p] {
			case '"':
				p = skipQuoted(b, p, len(b)-1)
			case '=':
				if keyEnd < 0 {
					keyEnd = p
				}
				p++
			default:
				p++
			}
		}
		if keyEnd >= 0 && isReservedKey(b[start:keyEnd]) {
			b = append(b, 0)
			copy(b[keyEnd+1:], b[keyEnd:])
			b[keyEnd] = '_'
			p++
			renamed = true
		}
	}
	return b, renamed
}
