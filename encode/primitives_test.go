package encode

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendTextQuote(t *testing.T) {
	for _, s := range []string{"", "a", "request handled", `a"b\c`, strings.Repeat(`x"\ `, 9), "tab\there", "é", "\x7f", "\xff", "0123456789abcdef\"", "0123456\\"} {
		require.Equal(t, strconv.Quote(s), string(appendTextQuote(nil, s)), "%q", s)
	}
}

// TestAppendTextKeyAsSlog: a key with a group prefix is written as slog's
// appendTwoStrings writes it: both parts bare when neither needs quoting,
// else strconv.Quote of prefix+key as one string, which differs from
// quoting the parts separately when the prefix ends in part of a rune that
// the key completes (audit 5, finding 6).
func TestAppendTextKeyAsSlog(t *testing.T) {
	slogKey := func(prefix, key string) string {
		if prefix == "" {
			if needsQuoting(key) {
				return strconv.Quote(key)
			}
			return key
		}
		if !needsQuoting(prefix) && !needsQuoting(key) {
			return prefix + key
		}
		return strconv.Quote(prefix + key)
	}
	cases := []struct{ prefix, key string }{
		{"", "k"}, {"", "a b"}, {"", ""}, {"g.", "k"}, {"g.", ""}, {"g.", "a b"}, {"a b.", "k"},
		{"é.", "k"}, {"é.", "\xff"}, {"\xff.", "k"}, {"x.\u200b.", "n"},
		{"x.\xe2\x80", "\xa9"},      // U+2029 across the two parts
		{"x.\xe2\x80", "\xa9 more"}, // the same, and a space
		{"\xe2", "\x82\xac"},        // U+20AC
		{"x.\xc3", "\xa9"},          // é
		{"x.\xc3", "k"},             // stays invalid
		{"x.\xf0\x9f", "\x98\x80"},  // U+1F600
		{"x.\xe2\x80", ""},
	}
	for _, c := range cases {
		require.Equal(t, slogKey(c.prefix, c.key), string(appendTextKey(nil, c.prefix, c.key)), "%q + %q", c.prefix, c.key)
	}
}

func TestSWARScanners(t *testing.T) {
	for i := 0; i < 256; i++ {
		for pos := 0; pos < 16; pos++ {
			b := []byte(strings.Repeat("a", 16))
			b[pos] = byte(i)
			s := string(b)
			jp, tp, pp := jsonPlainPrefix(s), textPlainPrefix(s), printablePrefix(s)
			jsonBad := i < 0x20 || i == '"' || i == '\\' || i >= 0x80
			textBad := i <= 0x20 || i == '=' || i == '"' || i >= 0x80
			printBad := i < 0x20 || i >= 0x7f || i == '"' || i == '\\'
			want := func(bad bool) int {
				if bad {
					return pos / 8 * 8
				}
				return 16
			}
			require.Equal(t, want(jsonBad), jp, "json byte %#x at %d", i, pos)
			require.Equal(t, want(textBad), tp, "text byte %#x at %d", i, pos)
			// Odd lengths use the overlapping final word: the result is
			// either the whole string or a word boundary before the byte.
			odd := s[:13]
			if pos < 13 {
				wantOdd := 13
				if jsonBad {
					wantOdd = pos / 8 * 8
				}
				require.Equal(t, wantOdd, jsonPlainPrefix(odd), "json odd byte %#x at %d", i, pos)
				wantOdd = 13
				if textBad {
					wantOdd = pos / 8 * 8
				}
				require.Equal(t, wantOdd, textPlainPrefix(odd), "text odd byte %#x at %d", i, pos)
			}
			require.Equal(t, want(printBad), pp, "printable byte %#x at %d", i, pos)
		}
	}
}
