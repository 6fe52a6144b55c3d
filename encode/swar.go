package encode

// Word-at-a-time scanning: the common string is plain ASCII that needs no
// escaping or quoting, so test 8 bytes per step and only fall back to the
// byte loop at the first word that may contain something interesting.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 reads 8 bytes of s at i, little-endian (the compiler merges the loads).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hasLess reports (as a non-zero result) whether any byte of x is < n (n <= 128).
func hasLess(x uint64, n byte) uint64 { return (x - lsb*uint64(n)) & ^x & msb }

// hasByte reports (as a non-zero result) whether any byte of x equals b.
func hasByte(x uint64, b byte) uint64 {
	y := x ^ (lsb * uint64(b))
	return (y - lsb) & ^y & msb
}

// jsonPlainPrefix returns the length of the longest prefix of s, in whole
// 8-byte words, that is ASCII needing no JSON escaping.
func jsonPlainPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !jsonPlainWord(load64(s, i)) {
			return i
		}
	}
	// A final, overlapping word settles the tail of strings of 8+ bytes.
	if i < len(s) && len(s) >= 8 && jsonPlainWord(load64(s, len(s)-8)) {
		return len(s)
	}
	return i
}

func jsonPlainWord(x uint64) bool {
	return (x&msb)|hasLess(x, 0x20)|hasByte(x, '"')|hasByte(x, '\\') == 0
}

// textPlainPrefix is jsonPlainPrefix for slog's text quoting rule: no
// spaces, control characters, '=', '"' or non-ASCII bytes.
func textPlainPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !textPlainWord(load64(s, i)) {
			return i
		}
	}
	if i < len(s) && len(s) >= 8 && textPlainWord(load64(s, len(s)-8)) {
		return len(s)
	}
	return i
}

func textPlainWord(x uint64) bool {
	return (x&msb)|hasLess(x, 0x21)|hasByte(x, '=')|hasByte(x, '"') == 0
}

// printablePrefix returns the length of the longest prefix of s, in whole
// words, made of printable ASCII (0x20..0x7e) other than '"' and '\\'.
func printablePrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		if (x&msb)|hasLess(x, 0x20)|hasByte(x, 0x7f)|hasByte(x, '"')|hasByte(x, '\\') != 0 {
			break
		}
	}
	return i
}
