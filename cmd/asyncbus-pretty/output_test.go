package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of output.go: line endings, above all an input's unterminated
// last line.

// printInputs prints each input as one file through one output.
func printInputs(t *testing.T, f filter, inputs ...string) string {
	t.Helper()
	var buf bytes.Buffer
	out := newOutput(newPrinter(false, true, f), &buf)
	for _, in := range inputs {
		lr := newLineReader(strings.NewReader(in))
		require.NoError(t, out.drain(lr))
		require.NoError(t, out.endOfFile(lr))
	}
	require.NoError(t, out.flush())
	return buf.String()
}

func TestOutputLineEndings(t *testing.T) {
	const rec = `{"time":"2026-12-01T12:34:56.789Z","level":"INFO","msg":"m"}`
	warnOnly := filter{minLevel: 4, hasLevel: true}
	for _, tc := range []struct {
		name   string
		f      filter
		inputs []string
		want   string
	}{
		{"terminated", filter{}, []string{"a\nb\n"}, "a\nb\n"},
		{"unterminated line passes byte for byte", filter{}, []string{"a\nb"}, "a\nb"},
		{"unterminated CR kept", filter{}, []string{"a\r\nb\r"}, "a\r\nb\r"},
		{"unterminated record ends its line", filter{}, []string{"a\n" + rec}, "a\n12:34:56.789 INFO  m\n"},
		{"next file starts a new line", filter{}, []string{"x", "y\n", "z"}, "x\ny\nz"},
		{"hidden unterminated record", warnOnly, []string{"a\nlevel=info msg=m"}, "a\n"},
		{"hidden unterminated line", filter{matches: []match{{"k", "v"}}}, []string{"k=v msg=m\nplain"}, "m k=v\n"},
		{"hidden lines do not end the open line", warnOnly, []string{"x", "level=info msg=m\n", "y"}, "x\ny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, printInputs(t, tc.f, tc.inputs...))
		})
	}
}
