package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunPrintsTheFigures: a small run of each handler prints its line.
func TestRunPrintsTheFigures(t *testing.T) {
	for _, h := range []string{"asyncbus", "slog"} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"-handler", h, "-shape", "short", "-n", "100"}, &stdout, &stderr), stderr.String())
		assert.Contains(t, stdout.String(), h+", 100 short records into io.Discard: ")
		assert.Contains(t, stdout.String(), "minor page faults, resident set +")
		assert.Empty(t, stderr.String())
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-handler", "zap"}, {"-shape", "huge"}, {"-n", "0"}, {"-no-such-flag"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(args, &stdout, &stderr), args)
		assert.NotEmpty(t, stderr.String(), args)
	}
}
