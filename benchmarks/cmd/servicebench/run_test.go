package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// countLines tells record lines from asyncbus's drop markers and sums the
// records the markers say were dropped.
func TestCountLines(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		in                       string
		records, markers, marked uint64
	}{
		{"empty", "", 0, 0, 0},
		{"records", "{\"msg\":\"a\"}\n{\"msg\":\"b\"}\n", 2, 0, 0},
		{"markers", "{\"msg\":\"a\"}\n{\"level\":\"WARN\",\"msg\":\"asyncbus: records dropped\",\"dropped\":42}\n" +
			"{\"level\":\"WARN\",\"msg\":\"asyncbus: records dropped\",\"dropped\":8,\"x\":1}\n", 1, 2, 50},
		{"unterminated last line", "{\"msg\":\"a\"}\n{\"msg\":\"b\"}", 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records, markers, marked := countLines(strings.NewReader(tc.in))
			assert.Equal(t, tc.records, records)
			assert.Equal(t, tc.markers, markers)
			assert.Equal(t, tc.marked, marked)
		})
	}
}

// lost counts the records the output lacks: two per request and one per
// Error.
func TestRunResultLost(t *testing.T) {
	r := runResult{server: serverStats{Requests: 1000, Errors: 1}, records: 1995}
	assert.EqualValues(t, 6, r.lost())
}
