package encode

// Word-at-a-time scanning: the common string is plain ASCII that needs no
// escaping or quoting, so test 8 bytes per step and only fall back to the
// byte loop at the first word that may contain something interesting.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 reads 8 bytes of s at i, little-endian (the compiler merges the
// loads into one; slicing first leaves a single bounds check).
func load64(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
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

// load32 reads 4 bytes of s at i, little-endian.
func load32(s string, i int) uint64 {
	t := s[i : i+4]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24
}

// Byte classes for the short-string scanners (bit set: the byte is plain).
const (
	clsJSON  = 1 << iota // needs no escaping inside a JSON string
	clsText              // needs no quoting in slog's text format (ASCII only)
	clsKey               // kept as is in a logfmt key
	clsQuote             // printable ASCII other than '"' and '\\'
)

var byteClass = func() (t [256]uint8) {
	for i := range len(jsonSafe) { // the ASCII bytes; the rest are never plain
		b := byte(i)
		if jsonSafe[b] {
			t[i] |= clsJSON
		}
		if b == '\\' || (jsonSafe[b] && b != ' ' && b != '=') {
			t[i] |= clsText
		}
		if b > ' ' && b != '=' && b != '"' && b != 0x7f {
			t[i] |= clsKey
		}
		if jsonSafe[b] && b != 0x7f {
			t[i] |= clsQuote
		}
	}
	return t
}()

// jsonClean reports whether s is ASCII that needs no escaping in JSON.
func jsonClean(s string) bool { return wcJSON.clean(s) }

// textClean reports whether s is ASCII that slog's TextHandler writes
// unquoted. The empty string is reported clean; callers check for it.
func textClean(s string) bool { return wcText.clean(s) }

// logfmtKeyClean reports whether appendLogfmtKey would copy s unchanged.
func logfmtKeyClean(s string) bool { return wcKey.clean(s) }

// quoteClean reports whether s is printable ASCII without '"' or '\\', so
// that strconv.Quote(s) is s between quotes.
func quoteClean(s string) bool { return wcQuote.clean(s) }

// clean reports whether every byte of s is in the class: a word at a time,
// with a final overlapping word (or two overlapping half words for 4 to 7
// bytes), and a table lookup per byte for shorter strings.
func (w *wordClass) clean(s string) bool {
	n := len(s)
	if n >= 8 {
		for i := 0; i+8 <= n; i += 8 {
			if !w.plain(load64(s, i)) {
				return false
			}
		}
		return n&7 == 0 || w.plain(load64(s, n-8))
	}
	if n >= 4 {
		return w.plain(load32(s, 0) | load32(s, n-4)<<32)
	}
	for i := 0; i < n; i++ {
		if byteClass[s[i]]&w.cls == 0 {
			return false
		}
	}
	return true
}

// wordClass describes a set of plain bytes, tested a word at a time: ASCII
// bytes that are not below lt and not equal to a, b or c, all four given
// repeated in every byte of a word (lsb * n).
type wordClass struct {
	cls         uint8 // the matching byteClass bit, for strings under 4 bytes
	lt, a, b, c uint64
}

var (
	wcJSON  = wordClass{clsJSON, lsb * 0x20, lsb * '"', lsb * '\\', lsb * '"'}
	wcText  = wordClass{clsText, lsb * 0x21, lsb * '=', lsb * '"', lsb * '"'}
	wcKey   = wordClass{clsKey, lsb * 0x21, lsb * '=', lsb * '"', lsb * 0x7f}
	wcQuote = wordClass{clsQuote, lsb * 0x20, lsb * '"', lsb * '\\', lsb * 0x7f}
)

// plain reports whether every byte of x is in the class (see hasLess and
// hasByte for why the borrow tricks are exact as zero tests).
func (w *wordClass) plain(x uint64) bool {
	ya, yb, yc := x^w.a, x^w.b, x^w.c
	return (x|(x-w.lt)&^x|(ya-lsb)&^ya|(yb-lsb)&^yb|(yc-lsb)&^yc)&msb == 0
}
