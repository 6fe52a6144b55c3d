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

// TestREADMEProgramsCompile builds every ```go block of README.md and of
// docs/*.md that is a whole program (starts with "package main"), against
// this checkout, so the quick start compiles as written, imports included.
// Programs that import controller-runtime, which this module does not
// require, are built by the integration module's TestREADMEDropInCompiles.
func TestREADMEProgramsCompile(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	var programs []string
	for _, path := range append([]string{"README.md"}, docs...) {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, b := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(text), -1) {
			if strings.HasPrefix(b[1], "package main\n") && !strings.Contains(b[1], `"sigs.k8s.io/`) {
				programs = append(programs, b[1])
			}
		}
	}
	require.GreaterOrEqual(t, len(programs), 3, "the quick start's and the docs' programs")

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
	// An issue number means nothing to a reader outside the project.
	issue := regexp.MustCompile(`(?i)\bissues? [0-9]|#[0-9]{2}\b`)
	for path, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			assert.False(t, internal.MatchString(line), "%s names something a user cannot use: %q", path, line)
			assert.False(t, issue.MatchString(line), "%s names an issue: %q", path, line)
		}
	}
	// No user doc describes a write path the library no longer has; the
	// README also keeps to the reader's words.
	gone := regexp.MustCompile(`(?i)write-through|written through|writes through`)
	for path, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			assert.False(t, gone.MatchString(line), "%s describes a write path that is gone: %q", path, line)
		}
	}
	words := regexp.MustCompile(`(?i)drainer|target[^.|]*missed|CI machine|this project's`)
	for _, line := range strings.Split(texts["README.md"], "\n") {
		assert.False(t, words.MatchString(line), "README.md uses an internal word: %q", line)
	}
}

// TestREADMEIsShort: the README is read in five minutes. It has at most
// 250 lines, its sentences average at most 25 words (zap's, zerolog's and
// slog's docs average 20 to 25), and its opening paragraph has at most 80.
func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 250, "lines")
	sentences := proseSentences(readme)
	require.NotEmpty(t, sentences)
	words, longest := 0, ""
	for _, s := range sentences {
		n := len(strings.Fields(s))
		words += n
		if n > len(strings.Fields(longest)) {
			longest = s
		}
	}
	mean := float64(words) / float64(len(sentences))
	t.Logf("%d sentences, %.1f words on average; the longest (%d words): %s", len(sentences), mean, len(strings.Fields(longest)), longest)
	assert.LessOrEqual(t, mean, 25.0, "words per sentence")
	opening := strings.Fields(openingParagraph(readme))
	t.Logf("opening paragraph: %d words", len(opening))
	assert.NotEmpty(t, opening)
	assert.LessOrEqual(t, len(opening), 80, "the opening paragraph's words")
}

// proseSentences returns the sentences of a Markdown text's prose: its
// paragraphs, list items and the last cell of each table row, without code
// blocks, comments, headings or the header rows of tables.
func proseSentences(text string) []string {
	text = regexp.MustCompile("(?s)```.*?```|<!--.*?-->").ReplaceAllString(text, "")
	var paras []string
	var para []string
	flush := func() {
		if len(para) > 0 {
			paras = append(paras, strings.Join(para, " "))
			para = nil
		}
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		switch {
		case strings.TrimSpace(line) == "", strings.HasPrefix(line, "#"):
			flush()
		case strings.HasPrefix(line, "|"):
			flush()
			cells := strings.Split(strings.Trim(line, "| "), "|")
			header := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|-")
			last := strings.TrimSpace(cells[len(cells)-1])
			if !header && strings.HasSuffix(last, ".") {
				paras = append(paras, last)
			}
		case strings.HasPrefix(line, "- "):
			flush()
			para = append(para, strings.TrimPrefix(line, "- "))
		default:
			para = append(para, strings.TrimSpace(line))
		}
	}
	flush()
	end := regexp.MustCompile("([.!?])\\s+([A-Z`*\\[(0-9])")
	var out []string
	for _, p := range paras {
		p = end.ReplaceAllString(p, "$1\n$2")
		for _, s := range strings.Split(p, "\n") {
			if strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// openingParagraph returns the README's first paragraph of prose: the
// first one after the title that is neither code nor a comment.
func openingParagraph(readme string) string {
	readme = regexp.MustCompile("(?s)```.*?```|<!--.*?-->").ReplaceAllString(readme, "")
	for _, p := range regexp.MustCompile(`\n\s*\n`).Split(readme, -1) {
		if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(p, "#") {
			return p
		}
	}
	return ""
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
