package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe runs each kind of contestant on a small flow and checks the
// report and that every record reached the file.
func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		contestant string
		lines      int
	}{
		{"asyncbus-block", 3000},
		{"phuslu-async", 3000},
		{"noop", 0},
	} {
		t.Run(tc.contestant, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "probe.log")
			var stdout, stderr strings.Builder
			code := run([]string{"-contestant", tc.contestant, "-n", "3000", "-goroutines", "2", "-file", file}, &stdout, &stderr)
			require.Equal(t, 0, code, stderr.String())
			assert.Contains(t, stdout.String(), tc.contestant+", 3000 records, 2 goroutines: wall ")
			assert.Equal(t, tc.contestant == "asyncbus-block", strings.Contains(stdout.String(), "records per round"))
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, tc.lines, strings.Count(string(data), "\n"))
		})
	}
}

func TestProbeBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-contestant", "nope"},
		{"-n", "0"},
		{"-n", "3", "-goroutines", "4"},
		{"-bogus"},
	} {
		var stdout, stderr strings.Builder
		assert.Equal(t, 2, run(args, &stdout, &stderr), "%v", args)
	}
}
