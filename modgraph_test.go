package asyncbus_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// helloWorld is the smallest program on asyncbus, a stand-in for a user's.
const helloWorld = `package main

import (
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
)

func main() {
	asyncbus.SetDefault(asyncbus.NewHandler(os.Stdout, nil))
	defer asyncbus.CloseDefault()
	slog.Info("hello")
}
`

// helloModules are the modules in a hello world's module graph (go list -m
// all) besides its own and asyncbus: the library's one go.mod lists the
// dependencies of its OpenTelemetry, logr and protobuf packages and of its
// tests, and Go's graph pruning keeps each of them and no more. The
// program links only golang.org/x/sys.
var helloModules = []string{
	"github.com/cespare/xxhash/v2",
	"github.com/go-logfmt/logfmt",
	"github.com/go-logr/logr",
	"github.com/go-logr/stdr",
	"github.com/google/uuid",
	"github.com/stretchr/testify",
	"go.opentelemetry.io/auto/sdk",
	"go.opentelemetry.io/otel",
	"go.opentelemetry.io/otel/log",
	"go.opentelemetry.io/otel/metric",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/sdk/log",
	"go.opentelemetry.io/otel/sdk/metric",
	"go.opentelemetry.io/otel/trace",
	"go.uber.org/goleak",
	"go.yaml.in/yaml/v3",
	"golang.org/x/sys",
	"google.golang.org/protobuf",
}

// helloDownloads are the modules whose source go mod tidy downloads for the
// hello world: those of the packages it imports and of the tests of
// asyncbus's root package, which tidy also resolves.
var helloDownloads = []string{
	"github.com/go-logfmt/logfmt",
	"github.com/stretchr/testify",
	"go.uber.org/goleak",
	"go.yaml.in/yaml/v3",
	"golang.org/x/sys",
}

// helloModule writes the hello world's module, on this checkout, to a new
// directory and returns it.
func helloModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mod := "module hello\n\ngo 1.26.0\n\nrequire github.com/asyncbus/asyncbus v0.0.0\n\nreplace github.com/asyncbus/asyncbus => " + repoRoot(t) + "\n"
	sum, err := os.ReadFile(filepath.Join(repoRoot(t), "go.sum"))
	require.NoError(t, err)
	for file, body := range map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": helloWorld} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644))
	}
	return dir
}

// TestHelloWorldModuleGraph: a hello world's module graph holds exactly
// helloModules (18, 20 lines of go list -m all with the program's and
// asyncbus's), and it links only golang.org/x/sys. A new dependency of the
// library fails it: update the list, and the README's count, on purpose.
func TestHelloWorldModuleGraph(t *testing.T) {
	dir := helloModule(t)
	run := func(args ...string) string {
		cmd := exec.Command(goTool(t), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		require.NoError(t, err, "go %s", strings.Join(args, " "))
		return string(out)
	}
	var graph []string
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-m", "-f", "{{.Path}}", "all")), "\n") {
		if line != "hello" && line != "github.com/asyncbus/asyncbus" {
			graph = append(graph, line)
		}
	}
	sort.Strings(graph)
	require.Equal(t, helloModules, graph)
	linked := regexp.MustCompile(`(?m)^[a-z0-9.-]+\.[a-z]+/\S+$`).FindAllString(run("list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."), -1)
	require.Subset(t, []string{"hello", "github.com/asyncbus/asyncbus", "golang.org/x/sys"}, uniq(linked))
}

// TestHelloWorldTidyDownloads runs go mod tidy on the hello world with an
// empty module cache and checks which modules' source it downloads:
// helloDownloads. It needs the module proxy, so it runs only with
// ASYNCBUS_TIDY_DOWNLOADS=1.
func TestHelloWorldTidyDownloads(t *testing.T) {
	if os.Getenv("ASYNCBUS_TIDY_DOWNLOADS") != "1" {
		t.Skip("needs the module proxy: ASYNCBUS_TIDY_DOWNLOADS=1 go test -run TestHelloWorldTidyDownloads")
	}
	dir := helloModule(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "go.sum")))
	cache := t.TempDir()
	cmd := exec.Command(goTool(t), "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMODCACHE="+cache, "GOFLAGS=-modcacherw")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	zips, err := filepath.Glob(filepath.Join(cache, "cache", "download", "*", "*", "*", "@v", "*.zip"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(cache, "cache", "download", "*", "*", "@v", "*.zip"))
	require.NoError(t, err)
	var got []string
	for _, z := range append(zips, more...) {
		rel, err := filepath.Rel(filepath.Join(cache, "cache", "download"), filepath.Dir(filepath.Dir(z)))
		require.NoError(t, err)
		got = append(got, filepath.ToSlash(rel))
	}
	sort.Strings(got)
	require.Equal(t, helloDownloads, got)
}

// uniq returns the distinct strings of s.
func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
