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
