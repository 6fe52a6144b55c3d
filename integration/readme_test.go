package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEDropInCompiles builds the README's whole programs that import
// controller-runtime (the drop-in's), inside this module, which requires
// it; the root module's TestREADMEProgramsCompile builds the others.
func TestREADMEDropInCompiles(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	var programs []string
	for _, b := range blocks {
		if strings.HasPrefix(b[1], "package main\n") && strings.Contains(b[1], `"sigs.k8s.io/`) {
			programs = append(programs, b[1])
		}
	}
	require.NotEmpty(t, programs, "the drop-in's program")
	for i, src := range programs {
		// A directory of this module (so its requirements apply), named
		// with a leading underscore so that ./... patterns skip it.
		dir, err := os.MkdirTemp(".", "_readme")
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
		cmd := exec.Command("go", "build", "-o", os.DevNull, "./"+filepath.Base(dir))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "README program %d does not build:\n%s\n%s", i+1, out, src)
	}
}
