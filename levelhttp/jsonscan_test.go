package levelhttp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanObjectErrors: every malformed body is reported with its offset
// and what was expected there, in words that do not depend on the Go
// release (encoding/json's own texts and offsets changed in Go 1.27).
func TestScanObjectErrors(t *testing.T) {
	tests := []struct{ name, body, err string }{
		{"only the brace", `{`, `the body ends at offset 1, inside the object (want a key or '}')`},
		{"cut after key", `{"rules"`, `the body ends at offset 8, inside the object (want ':')`},
		{"cut after colon", `{"rules":`, `the body ends at offset 9, inside the object (want a value)`},
		{"cut in the string", `{"rules":"deb`, `the body ends at offset 13, inside the object (want '"' ending the string)`},
		{"cut after the value", `{"rules":"debug"`, `the body ends at offset 16, inside the object (want ',' or '}')`},
		{"cut after a comma", `{"rules":"debug",`, `the body ends at offset 17, inside the object (want a key)`},
		{"cut in an escape", `{"rules":"a\`, `the body ends at offset 12, inside the object (want an escape: one of "\/bfnrt or u)`},
		{"cut in a \\u escape", `{"rules":"\u00`, `the body ends at offset 14, inside the object (want a hex digit of a \u escape)`},
		{"cut in an array", `{"rules":[1,`, `the body ends at offset 12, inside the object (want a value)`},
		{"cut in a literal", `{"rules":tr`, `the body ends at offset 11, inside the object (want 'u' of true)`},
		{"offsets count leading space", " \n{\"rules\":", `the body ends at offset 11, inside the object (want a value)`},
		{"stray text after the value", `{"rules":"debug"x`, `invalid character 'x' at offset 16 (want ',' or '}')`},
		{"no colon", `{"rules" "x"}`, `invalid character '"' at offset 9 (want ':')`},
		{"comma before the brace", `{"rules":"x",}`, `invalid character '}' at offset 13 (want a key)`},
		{"bare key", `{rules:"x"}`, `invalid character 'r' at offset 1 (want a key or '}')`},
		{"single quotes", `{'rules':'x'}`, `invalid character '\'' at offset 1 (want a key or '}')`},
		{"non-ASCII byte", "{\xff}", `invalid byte 0xff at offset 1 (want a key or '}')`},
		{"control character in a string", "{\"rules\":\"a\x01b\"}", `invalid character '\x01' at offset 11 (want an escape for a control character in a string)`},
		{"bad escape", `{"rules":"\q"}`, `invalid character 'q' at offset 11 (want an escape: one of "\/bfnrt or u)`},
		{"bad \\u escape", `{"rules":"\u12G4"}`, `invalid character 'G' at offset 14 (want a hex digit of a \u escape)`},
		{"bad literal", `{"rules":tru}`, `invalid character '}' at offset 12 (want 'e' of true)`},
		{"no value", `{"rules":}`, `invalid character '}' at offset 9 (want a value)`},
		{"lone minus", `{"rules":-}`, `invalid character '}' at offset 10 (want a digit)`},
		{"leading zero", `{"rules":01}`, `invalid character '1' at offset 10 (want ',' or '}')`},
		{"no fraction digits", `{"rules":1.}`, `invalid character '}' at offset 11 (want a digit)`},
		{"no exponent digits", `{"rules":1e+}`, `invalid character '}' at offset 12 (want a digit)`},
		{"array without comma", `{"rules":[1 2]}`, `invalid character '2' at offset 12 (want ',' or ']')`},
		{"nested object", `{"rules":{"a" 1}}`, `invalid character '1' at offset 14 (want ':')`},
		{"trailing text", `{"rules":"debug"} trailing`, `trailing data after the object at offset 18`},
		{"second object", `{"rules":"debug"}{"rules":"error"}`, `trailing data after the object at offset 17`},
		{"not an object", `rules`, `invalid character 'r' at offset 0 (want '{')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, err := scanObject([]byte(tt.body))
			require.EqualError(t, err, tt.err)
			assert.Nil(t, members)
			assert.False(t, json.Valid([]byte(tt.body)), "encoding/json agrees that the body is malformed")
		})
	}
}

// TestScanObjectMembers: a well-formed object's members, as raw JSON, with
// every kind of value nested inside; encoding/json agrees it is valid.
func TestScanObjectMembers(t *testing.T) {
	tests := []struct {
		name, body string
		want       []member
	}{
		{"empty object", " {} ", nil},
		{"one string", `{"rules":"info,db=debug"}`, []member{{[]byte(`"rules"`), []byte(`"info,db=debug"`)}}},
		{"escapes", `{"r\u0075les":"a\"\\\/\b\f\n\r\t\u00e9"}`, []member{{[]byte(`"r\u0075les"`), []byte(`"a\"\\\/\b\f\n\r\t\u00e9"`)}}},
		{"spaced", "\t{ \"a\" : 1 ,\r\n\"b\":[ ] }\n", []member{{[]byte(`"a"`), []byte(`1`)}, {[]byte(`"b"`), []byte(`[ ]`)}}},
		{"numbers", `{"a":-0,"b":12.5e+3,"c":1E-2,"d":0.25}`, []member{
			{[]byte(`"a"`), []byte(`-0`)}, {[]byte(`"b"`), []byte(`12.5e+3`)}, {[]byte(`"c"`), []byte(`1E-2`)}, {[]byte(`"d"`), []byte(`0.25`)},
		}},
		{"literals and nesting", `{"a":[true,false,null,{"x":{}},[[]]],"b":{"c":"d"}}`, []member{
			{[]byte(`"a"`), []byte(`[true,false,null,{"x":{}},[[]]]`)}, {[]byte(`"b"`), []byte(`{"c":"d"}`)},
		}},
		{"invalid UTF-8 inside a string", "{\"rules\":\"\xff\"}", []member{{[]byte(`"rules"`), []byte("\"\xff\"")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, err := scanObject([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.want, members)
			assert.True(t, json.Valid([]byte(tt.body)))
		})
	}
}
