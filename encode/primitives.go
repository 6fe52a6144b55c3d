package encode

// Append primitives shared by several formats: numbers, durations, JSON
// escaping, slog's TextHandler quoting and its keys, scalar values.

import (
	"log/slog"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// isScalar reports whether k is written directly, without resolution or
// recursion: every kind but KindAny, KindGroup and KindLogValuer.
func isScalar(k slog.Kind) bool {
	return k != slog.KindAny && k != slog.KindGroup && k != slog.KindLogValuer
}

// appendQuoted appends s between double quotes, unescaped.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTextScalar appends a scalar value the way slog's TextHandler does
// (logfmt: with JSON escaping inside the quotes).
func appendTextScalar(b []byte, v slog.Value, k slog.Kind, logfmt bool) []byte {
	switch k {
	case slog.KindString:
		if logfmt {
			return appendLogfmtValueString(b, v.String())
		}
		return appendTextValueString(b, v.String())
	case slog.KindInt64:
		return appendInt(b, valueInt64(&v, k))
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, valueBool(&v))
	case slog.KindDuration:
		return appendDuration(b, time.Duration(valueInt64(&v, k)))
	case slog.KindTime:
		return appendRFC3339Millis(b, v.Time())
	default: // slog.KindFloat64
		return appendTextFloat(b, v.Float64())
	}
}

// appendTextValueString appends s, quoted only if slog's TextHandler would.
func appendTextValueString(b []byte, s string) []byte {
	if len(s) > 0 && textClean(s) {
		return append(b, s...)
	}
	if quoteClean(s) {
		// Printable ASCII without '"' or '\\' that is not textClean: it is
		// empty or has a space or '=', so slog quotes it, and
		// strconv.Quote adds nothing but the quotes.
		return appendQuoted(b, s)
	}
	if needsQuoting(s) {
		return appendTextQuote(b, s)
	}
	return append(b, s...)
}

// bytesToString returns a string that shares b's memory, without copying.
// It is used only for transient, read-only views of a state's key prefix
// (passed to needsQuoting and strconv.AppendQuote, which do not retain it)
// while the prefix is not modified; the string never outlives the call.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendJSONFloat appends f formatted exactly as encoding/json formats a
// float64 (ES6 number formatting), without going through json.Marshal.
// NaN and ±Inf are not valid JSON; the caller handles them.
func appendJSONFloat(b []byte, f float64) []byte { return appendJSONFloatBits(b, f, 64) }

// appendJSONFloatBits is appendJSONFloat for a float of bits 32 or 64: the
// shortest text that reads back as the same float of that size.
func appendJSONFloatBits(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	// A float32 is compared as a float32, as encoding/json does.
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
		bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendDuration appends d.String() without allocating.
func appendDuration(b []byte, d time.Duration) []byte {
	var buf [32]byte
	w := len(buf)
	u := uint64(d)
	neg := d < 0
	if neg {
		u = -u
	}
	if u < uint64(time.Second) {
		var prec int
		w--
		buf[w] = 's'
		w--
		switch {
		case u == 0:
			buf[w] = '0'
			return append(b, buf[w:]...)
		case u < uint64(time.Microsecond):
			prec = 0
			buf[w] = 'n'
		case u < uint64(time.Millisecond):
			prec = 3
			w-- // "µ" is two bytes.
			copy(buf[w:], "µ")
		default:
			prec = 6
			buf[w] = 'm'
		}
		w, u = fmtFrac(buf[:w], u, prec)
		w = fmtInt(buf[:w], u)
	} else {
		w--
		buf[w] = 's'
		w, u = fmtFrac(buf[:w], u, 9)
		w = fmtInt(buf[:w], u%60)
		u /= 60
		if u > 0 {
			w--
			buf[w] = 'm'
			w = fmtInt(buf[:w], u%60)
			u /= 60
			if u > 0 {
				w--
				buf[w] = 'h'
				w = fmtInt(buf[:w], u)
			}
		}
	}
	if neg {
		w--
		buf[w] = '-'
	}
	return append(b, buf[w:]...)
}

func fmtFrac(buf []byte, v uint64, prec int) (nw int, nv uint64) {
	w := len(buf)
	print := false
	for i := 0; i < prec; i++ {
		digit := v % 10
		print = print || digit != 0
		if print {
			w--
			buf[w] = byte(digit) + '0'
		}
		v /= 10
	}
	if print {
		w--
		buf[w] = '.'
	}
	return w, v
}

func fmtInt(buf []byte, v uint64) int {
	w := len(buf)
	if v == 0 {
		w--
		buf[w] = '0'
	} else {
		for v > 0 {
			w--
			buf[w] = byte(v%10) + '0'
			v /= 10
		}
	}
	return w
}

const hexDigits = "0123456789abcdef"

// jsonSafe[b] is true for ASCII bytes that need no escaping inside a JSON
// string (everything but control characters, '"' and '\\').
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for i := 0x20; i < utf8.RuneSelf; i++ {
		t[i] = i != '"' && i != '\\'
	}
	return t
}()

// appendEscapedJSON escapes s for JSON exactly as the log/slog of the Go
// release the program is built with does (encoding/json with HTML escaping
// off; invalid UTF-8 becomes jsonInvalidUTF8; U+2028 and U+2029 are
// escaped). It does not add the surrounding quotes.
func appendEscapedJSON(buf []byte, s string) []byte {
	return appendEscapedJSONAs(buf, s, jsonInvalidUTF8, false)
}

// appendEscapedJSONAs is appendEscapedJSON writing each invalid UTF-8 byte
// as invalid (the escape `\ufffd` or the raw rune U+FFFD), and \b and \f
// as such where jsonBF (encoding/json's way; slog's is \u0008 and \u000c).
func appendEscapedJSONAs(buf []byte, s, invalid string, jsonBF bool) []byte {
	start := 0
	for i := jsonPlainPrefix(s); i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\')
			switch b {
			case '\\', '"':
				buf = append(buf, b)
			case '\b', '\f':
				switch {
				case !jsonBF:
					buf = append(buf, 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
				case b == '\b':
					buf = append(buf, 'b')
				default:
					buf = append(buf, 'f')
				}
			case '\n':
				buf = append(buf, 'n')
			case '\r':
				buf = append(buf, 'r')
			case '\t':
				buf = append(buf, 't')
			default:
				buf = append(buf, 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, invalid...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(buf, s[start:]...)
}

// needsQuoting reports whether slog's TextHandler would quote s.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := textPlainPrefix(s); i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b != '\\' && (b == ' ' || b == '=' || !jsonSafe[b]) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendQuotedInner appends strconv.Quote(s) without the surrounding quotes.
func appendQuotedInner(b []byte, s string) []byte {
	n := len(b)
	b = strconv.AppendQuote(b, s)
	copy(b[n:], b[n+1:len(b)-1])
	return b[:len(b)-2]
}

// appendTextQuote appends strconv.Quote(s). Printable ASCII, the common
// case, only needs '"' and '\\' escaped, which is done here directly.
func appendTextQuote(b []byte, s string) []byte {
	i := printablePrefix(s)
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	start := 0
	for i := printablePrefix(s); i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// digitPairs holds "00" through "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendUint appends u in decimal (strconv.AppendUint(b, u, 10)). Numbers
// of five digits or more are counted first and written two digits at a time
// straight into their place in b.
func appendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	if u < 100 {
		return append(b, digitPairs[2*u], digitPairs[2*u+1])
	}
	if u < 10000 {
		q := u / 100
		r := u - q*100
		if q < 10 {
			return append(b, byte('0'+q), digitPairs[2*r], digitPairs[2*r+1])
		}
		return append(b, digitPairs[2*q], digitPairs[2*q+1], digitPairs[2*r], digitPairs[2*r+1])
	}
	n := decimalLen(u)
	i := len(b)
	if cap(b)-i < n {
		b = slices.Grow(b, n)
	}
	b = b[:i+n]
	w := b[i:]
	j := n
	for u >= 100 {
		q := u / 100
		r := u - q*100
		j -= 2
		w[j], w[j+1] = digitPairs[2*r], digitPairs[2*r+1]
		u = q
	}
	if u >= 10 {
		w[0], w[1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		w[0] = byte('0' + u)
	}
	return b
}

// pow10 holds 10^0 through 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decimalLen returns the number of decimal digits of u.
func decimalLen(u uint64) int {
	// log10(2) ~ 1233/4096: u has t or t+1 digits.
	t := (bits.Len64(u) * 1233) >> 12
	if u < pow10[t] {
		return t
	}
	return t + 1
}

// appendInt appends v in decimal (strconv.AppendInt(b, v, 10)).
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), -uint64(v))
	}
	return appendUint(b, uint64(v))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendTextFloat appends f as slog's TextHandler does (%g, shortest).
func appendTextFloat(b []byte, f float64) []byte {
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendTextKey appends prefix+key the way slog's TextHandler writes a key.
func appendTextKey(b []byte, prefix, key string) []byte {
	if len(prefix) == 0 {
		return appendTextValueString(b, key)
	}
	if !needsQuoting(prefix) && !needsQuoting(key) {
		b = append(b, prefix...)
		return append(b, key...)
	}
	// slog quotes prefix+key as one string. When the prefix ends in an
	// ASCII byte (its '.'), no rune spans the two parts, and escaping them
	// separately gives the same bytes without building the concatenation.
	// A prefix that ends in part of a multi-byte rune (a group name cut
	// short) may be completed by the key's first bytes: quote the whole.
	if prefix[len(prefix)-1] >= utf8.RuneSelf {
		return strconv.AppendQuote(b, prefix+key)
	}
	b = append(b, '"')
	b = appendQuotedInner(b, prefix)
	b = appendQuotedInner(b, key)
	return append(b, '"')
}
