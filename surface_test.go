package asyncbus

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportedSurface keeps the root package's exported surface (constants,
// variables, functions, types and their methods and constructors) at most
// at the ceiling below, and lists it on failure. The first landing had 48
// names; the layout issue brought it to 47; ErrRetrying
// (Options.Retry.Attempts) is the 48th. The surface issue raised the ceiling
// by exactly the names it added, none of which an existing name could
// carry: DrainerStats and Handler.DrainerStats (50), the drainer's
// internals moved out of Stats into a view that may change between
// versions; MarkingSampler (51), the Sampler's marker binding, until then
// an unexported interface documented only in prose; ZapJSON and ZapConsole
// (53), valid formats that had no root constant. Handler.HandleAttrs, public
// only for otelbridge, moved behind an internal package (52). CloseDefault (53) is the one-line shutdown for the one-line slog.SetDefault
// setup, which keeps no *Handler to Close. FlightRecorder (54)
// configures the flight recorder, whose five settings no existing type
// could carry. GCPJSON, ECSJSON and DatadogJSON (57) are the
// cloud field presets: Format constants, as ZapJSON is, rather than a new
// Options field with its own type and constants (one name more), since a
// preset is a JSON variant and meaningless with any other format.
// Overflow.String and ColorMode.String (59) are fmt.Stringer
// implementations, so that %v prints an option's name and not a number;
// they add no concept to learn. EncodingOptions, RingOptions,
// RetryOptions and FeatureOptions (63) are the groups of Options,
// which had 23 flat fields; they move 16 fields rather than add settings.
// The public seams (77) replace
// internal/core, through which the module's own satellites reached the
// handler, so that a third party can write what they are: the record
// Encoder and OpenWithEncoder to plug it in (otlpsink, journald); the
// output's optional interfaces BatchWriter, Syncer, Closer, Reporter and
// Backlogger, until then anonymous or internal; Handler.HandleAttrs (back
// from internal/core), Handler.Grouped and Handler.WithWaitContext
// (otelbridge); Handler.HandleEncoded and Handler.Sync (logwriter); and
// DefaultWriteAttempts and DefaultWriteRetryMax (otlpsink sizes its memory
// of refused batches by the handler's retries). SetDefault (78) is the
// setup that keeps the standard log package's lines at exit: log.Fatal and
// log.Panic end the program at once, and slog.SetDefault queues their line
// like any Info record; no existing name sets log's output. A new name now
// has to replace one.
func TestExportedSurface(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/asyncbus/asyncbus")
	require.NoError(t, err)
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names...)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		names = append(names, typ.Name)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		for _, m := range typ.Methods {
			names = append(names, typ.Name+"."+m.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		assert.True(t, ast.IsExported(n[strings.LastIndex(n, ".")+1:]), n)
	}
	assert.LessOrEqual(t, len(names), 78, "the root's exported names:\n%s", strings.Join(names, "\n"))
	t.Logf("%d exported names", len(names))
}
