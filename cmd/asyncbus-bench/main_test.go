package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchmarksDirFindsTheModule checks that the launcher finds the nested
// benchmarks module holding the real command.
func TestBenchmarksDirFindsTheModule(t *testing.T) {
	dir, err := benchmarksDir()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "cmd", "asyncbus-bench", "main.go"))
	require.NoError(t, err, "benchmarks module at %s has no cmd/asyncbus-bench", dir)
}
