package asyncbus_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEProgramsCompile builds every ```go block of README.md that is a
// whole program (starts with "package main"), against this checkout, so the
// quick start compiles as written, imports included. Programs that import
// controller-runtime, which this module does not require, are built by
// the integration module's TestREADMEDropInCompiles.
func TestREADMEProgramsCompile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	var programs []string
	for _, b := range blocks {
		if strings.HasPrefix(b[1], "package main\n") && !strings.Contains(b[1], `"sigs.k8s.io/`) {
			programs = append(programs, b[1])
		}
	}
	require.GreaterOrEqual(t, len(programs), 2, "the quick start's programs")

	root, err := filepath.Abs(".")
	require.NoError(t, err)
	gomod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	gosum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(gomod))[1]
	require.NotEmpty(t, goVersion)
	for i, src := range programs {
		dir := t.TempDir()
		mod := "module readme\n\ngo " + goVersion + "\n\nrequire github.com/asyncbus/asyncbus v0.0.0\n\nreplace github.com/asyncbus/asyncbus => " + root + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
		// The library's own requirements resolve through the replace; -mod=mod
		// lets the go command add them to this throwaway go.mod.
		cmd := exec.Command("go", "build", "-mod=mod", "-o", os.DevNull, ".")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "README program %d does not build:\n%s\n%s", i+1, out, src)
	}
}
