package stack

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func here() []uintptr {
	pcs := make([]uintptr, MaxFrames)
	return pcs[:runtime.Callers(2, pcs)]
}

func TestFormatIsZapLayout(t *testing.T) {
	st := Format(here())
	lines := strings.Split(st, "\n")
	require.Zero(t, len(lines)%2, st)
	assert.Equal(t, "github.com/asyncbus/asyncbus/internal/stack.TestFormatIsZapLayout", lines[0])
	assert.Regexp(t, `^\t/.*/internal/stack/stack_test\.go:\d+$`, lines[1])
	assert.NotContains(t, st, "runtime.goexit")
	assert.Empty(t, Format(nil))
}

func TestAppendSkipsLeadingFramesOnly(t *testing.T) {
	skipTest := func(f runtime.Frame) bool { return strings.HasSuffix(f.Function, "TestAppendSkipsLeadingFramesOnly") }
	st := string(Append(nil, here(), skipTest))
	assert.True(t, strings.HasPrefix(st, "testing.tRunner\n"), st)
	all := func(runtime.Frame) bool { return true }
	st = string(Append(nil, here(), all))
	assert.NotEmpty(t, st, "the last frame is never skipped")
}

func TestFromStartsAtPC(t *testing.T) {
	pcs := here()
	st := From(pcs[1], nil) // tRunner's call site, which is on this stack too
	assert.True(t, strings.HasPrefix(st, "testing.tRunner\n"), st)
	st = From(0, nil)
	assert.True(t, strings.HasPrefix(st, "github.com/asyncbus/asyncbus/internal/stack.TestFromStartsAtPC\n"), st)
}

type loop struct{}

func (loop) Error() string { return "loop" }
func (l loop) Unwrap() error {
	return l // a cyclic chain: the walk must stop
}

type goErr struct{ pcs []uintptr }

func (e goErr) Error() string      { return "e" }
func (e goErr) Callers() []uintptr { return e.pcs }

func TestOfError(t *testing.T) {
	assert.Nil(t, OfError(nil))
	assert.Nil(t, OfError(errors.New("plain")))
	assert.Nil(t, OfError(loop{}))
	pcs := here()
	assert.Equal(t, pcs, OfError(errors.Join(loop{}, goErr{pcs})))
}

// forkErr is a chain that branches at every level: Unwrap() []error returns
// two children, so a walk bounded by depth alone visits 2^depth errors.
// self makes it a cycle through a branching node (each node is its own two
// children). unwraps counts the Unwrap calls of the whole tree.
type forkErr struct {
	depth   int
	self    bool
	unwraps *int
}

func (e *forkErr) Error() string { return "fork" }
func (e *forkErr) Unwrap() []error {
	*e.unwraps++
	if e.self {
		return []error{e, e}
	}
	if e.depth == 0 {
		return nil
	}
	c := &forkErr{depth: e.depth - 1, unwraps: e.unwraps}
	return []error{c, c}
}

func TestOfErrorBoundsBranchingChains(t *testing.T) {
	tests := []struct {
		name string
		err  func(unwraps *int) error
	}{
		{"tree of depth 24", func(n *int) error { return &forkErr{depth: 24, unwraps: n} }},
		{"tree of depth 1000", func(n *int) error { return &forkErr{depth: 1000, unwraps: n} }},
		{"cycle through a branching node", func(n *int) error { return &forkErr{self: true, unwraps: n} }},
		{"joined cycles", func(n *int) error {
			return errors.Join(&forkErr{self: true, unwraps: n}, &forkErr{self: true, unwraps: n})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			unwraps := 0
			assert.Nil(t, OfError(tc.err(&unwraps)))
			assert.Positive(t, unwraps)
			assert.LessOrEqual(t, unwraps, maxNodes, "the walk visits at most maxNodes errors in all")
		})
	}
}

func TestOfErrorFindsStackPastABranchingCycle(t *testing.T) {
	unwraps := 0
	pcs := here()
	assert.Equal(t, pcs, OfError(errors.Join(&forkErr{self: true, unwraps: &unwraps}, goErr{pcs})),
		"a cycle on one branch stops at maxDepth and leaves budget for the next")
}

type panicCallers struct{}

func (panicCallers) Error() string      { return "pc" }
func (panicCallers) Callers() []uintptr { panic("boom") }

type panicStackTrace struct{}

func (panicStackTrace) Error() string         { return "st" }
func (panicStackTrace) StackTrace() []uintptr { panic("boom") }

type panicUnwrap struct{}

func (panicUnwrap) Error() string { return "uw" }
func (e panicUnwrap) Unwrap() error {
	panic("boom")
}

type panicUnwrapMany struct{}

func (panicUnwrapMany) Error() string   { return "uwm" }
func (panicUnwrapMany) Unwrap() []error { panic("boom") }

func TestOfErrorSurvivesPanickingMethods(t *testing.T) {
	pcs := here()
	for _, err := range []error{panicCallers{}, panicStackTrace{}, panicUnwrap{}, panicUnwrapMany{}} {
		t.Run(err.Error(), func(t *testing.T) {
			require.NotPanics(t, func() { assert.Nil(t, OfError(err)) })
			require.NotPanics(t, func() {
				assert.Equal(t, pcs, OfError(errors.Join(err, goErr{pcs})), "the rest of the chain is still searched")
			})
		})
	}
}
