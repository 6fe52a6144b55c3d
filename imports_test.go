package asyncbus_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goTool returns the go command that runs these tests.
func goTool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to inspect the import graph")
	return path
}

// repoRoot is the module root (the package directory: tests run there).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	return dir
}

// TestImportGraphHasNoHTTP: importing asyncbus must not widen a service's
// HTTP surface (expvar's init registers /debug/vars) or pull in net/http.
func TestImportGraphHasNoHTTP(t *testing.T) {
	out, err := exec.Command(goTool(t), "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/asyncbus/asyncbus/internal/bus", "the listing is the real import graph")
	for _, forbidden := range []string{"expvar", "net/http"} {
		assert.NotContains(t, deps, forbidden)
	}
	for _, d := range deps {
		assert.False(t, strings.HasPrefix(d, "go.opentelemetry.io/"), "root imports %s", d)
	}
}

// TestHelloWorldBinarySize: a hello world on asyncbus.NewHandler is at most
// 1.65 times the size of the same program on slog.NewJSONHandler. (It was
// 1.52 before the native encoder of slog.Any values, whose plans for
// structs, maps and times add about 190 KB, 0.06 of the ratio.)
func TestHelloWorldBinarySize(t *testing.T) {
	goCmd, root := goTool(t), repoRoot(t)
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("go.mod", "module hello\n\ngo 1.26.0\n\nrequire github.com/asyncbus/asyncbus v0.0.0\n\nreplace github.com/asyncbus/asyncbus => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))
	write("asyncbus/main.go", `package main

import (
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
)

func main() {
	h := asyncbus.NewHandler(os.Stdout, nil)
	defer h.Close()
	slog.New(h).Info("hello, world", "n", 1)
}
`)
	write("slog/main.go", `package main

import (
	"log/slog"
	"os"
)

func main() {
	slog.New(slog.NewJSONHandler(os.Stdout, nil)).Info("hello, world", "n", 1)
}
`)
	size := func(pkg string) int64 {
		bin := filepath.Join(dir, pkg+".bin")
		cmd := exec.Command(goCmd, "build", "-mod=mod", "-o", bin, "./"+pkg)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		run, err := exec.Command(bin).Output()
		require.NoError(t, err)
		require.Contains(t, string(run), `"msg":"hello, world","n":1`)
		fi, err := os.Stat(bin)
		require.NoError(t, err)
		return fi.Size()
	}
	ours, ref := size("asyncbus"), size("slog")
	ratio := float64(ours) / float64(ref)
	t.Logf("hello world: asyncbus %d bytes, slog.NewJSONHandler %d bytes, ratio %.2f", ours, ref, ratio)
	assert.LessOrEqual(t, ratio, 1.65)
}

// TestOnlyTheRootImportsTheBus: the module's own satellites (otlpsink,
// journald, otelbridge, logwriter, httplog, logrbridge, ...) are built from
// the root's public API alone, as a third party's would be: no package of
// the module, tests included, imports internal/bus but the root and the
// bus itself; and internal/ringfile, the bus's durable ring, is imported by
// the bus (and itself) alone.
func TestOnlyTheRootImportsTheBus(t *testing.T) {
	const module = "github.com/asyncbus/asyncbus"
	out, err := exec.Command(goTool(t), "list", "-deps", "-test",
		"-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	importers := map[string]bool{}     // the module's packages that import internal/bus
	ringImporters := map[string]bool{} // ... and internal/ringfile
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, "\t")
		pkg := strings.TrimSuffix(strings.Fields(path)[0], ".test") // "p [p.test]" and "p.test" are p's tests
		if pkg != module && !strings.HasPrefix(pkg, module+"/") {
			continue
		}
		seen[pkg] = true
		for _, imp := range strings.Fields(imports) {
			if imp == module+"/internal/bus" {
				importers[pkg] = true
			}
			if imp == module+"/internal/ringfile" {
				ringImporters[pkg] = true
			}
		}
	}
	for _, satellite := range []string{"otlpsink", "journald", "otelbridge", "logwriter", "httplog", "logrbridge", "logrbridge/zap"} {
		require.True(t, seen[module+"/"+satellite], "the listing covers %s", satellite)
	}
	assert.False(t, seen[module+"/internal/core"], "no package is left behind the public seams")
	assert.True(t, importers[module], "the listing is the real import graph")
	delete(importers, module)
	delete(importers, module+"/internal/bus")
	assert.Empty(t, importers, "packages that import internal/bus")
	assert.True(t, ringImporters[module+"/internal/bus"], "the bus keeps its ring in the ring file package")
	delete(ringImporters, module+"/internal/bus")
	delete(ringImporters, module+"/internal/ringfile")
	assert.Empty(t, ringImporters, "packages that import internal/ringfile")
}
