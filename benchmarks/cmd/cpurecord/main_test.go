package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunPrintsTheTable: a tiny run prints the header line and one row per
// contestant asked for, the baseline always among them.
func TestRunPrintsTheTable(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-rounds", "1", "-scale", "0.001", "-shapes", "short", "-goroutines", "2", "-contestants", "asyncbus-block", "-quiet"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "CPU per record into io.Discard")
	assert.Contains(t, out, "| short | 2 | slog-json |")
	assert.Contains(t, out, "| short | 2 | asyncbus-block |")
	assert.Equal(t, 2, strings.Count(out, "| short |"))
	assert.Empty(t, stderr.String())
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-goroutines", "0"}, {"-goroutines", "x"}, {"-no-such-flag"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(args, &stdout, &stderr), args)
		assert.NotEmpty(t, stderr.String(), args)
	}
}
