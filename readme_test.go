package asyncbus_test

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestUserDocsNameNoInternals: the README, the user docs and every
// package's documentation (package comment, exported names, fields) name
// only what a user can see: no internal package, no source file, no
// private notes ("the seeds"). docs/design.md, which explains the
// internals to contributors, is exempt.
func TestUserDocsNameNoInternals(t *testing.T) {
	// A source file is a name on its own ("see x.go"), not the caller
	// field of an example line ("dir/file.go:12").
	internal := regexp.MustCompile("internal/[a-z]|(^|[\\s(`\"])[a-z_]+\\.go($|[\\s).,`\"])|the seeds")
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	texts := map[string]string{}
	for _, path := range append(docs, "README.md") {
		if path == filepath.Join("docs", "design.md") {
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		texts[path] = string(b)
	}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			return nil
		case path != "." && (path == "internal" || path == "benchmarks" || path == "integration" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		}
		for i, text := range packageDocs(t, path) {
			texts[fmt.Sprintf("%s (doc %d)", path, i)] = text
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(texts), 100)
	for path, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			assert.False(t, internal.MatchString(line), "%s names something a user cannot use: %q", path, line)
		}
	}
}

// packageDocs returns what go doc shows of the package in dir: its
// package comment and the comments of its exported names and fields.
func packageDocs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	for _, path := range paths {
		if !strings.HasSuffix(path, "_test.go") {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			require.NoError(t, err)
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
	require.NoError(t, err)
	texts := []string{p.Doc}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			texts = append(texts, v.Doc)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			texts = append(texts, f.Doc)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		texts = append(texts, typ.Doc)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
		ast.Inspect(typ.Decl, func(n ast.Node) bool {
			if f, ok := n.(*ast.Field); ok && len(f.Names) > 0 && f.Names[0].IsExported() {
				texts = append(texts, f.Doc.Text(), f.Comment.Text())
			}
			return true
		})
	}
	return texts
}
