package outputcall

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicker panics in every method; quiet answers each call itself.
type panicker struct{}

func (panicker) Write([]byte) (int, error)        { panic("w") }
func (panicker) WriteBatch([][]byte) (int, error) { panic("b") }
func (panicker) Sync() error                      { panic("s") }
func (panicker) Path() string                     { panic("p") }

type quiet struct{}

func (quiet) Write(p []byte) (int, error)        { return len(p), nil }
func (quiet) WriteBatch(r [][]byte) (int, error) { return len(r), nil }
func (quiet) Sync() error                        { return errors.New("sync failed") }
func (quiet) Path() string                       { return "/var/log/app.log" }

// Each call passes the output's answer through, or turns its panic into a
// *PanicError naming the operation, with nothing written.
func TestCallsTurnPanicsIntoErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(any) (int, error)
		n    int
		op   string
	}{
		{"Write", func(o any) (int, error) { return Write(o.(interface{ Write([]byte) (int, error) }), []byte("abc")) }, 3, "write"},
		{"WriteBatch", func(o any) (int, error) { return WriteBatch(o.(Batcher), [][]byte{{'a'}, {'b'}}) }, 2, "write"},
		{"Sync", func(o any) (int, error) { return 0, Sync(o.(interface{ Sync() error })) }, 0, "sync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.call(quiet{})
			assert.Equal(t, tc.n, n)
			if tc.op == "sync" {
				assert.EqualError(t, err, "sync failed", "the output's own error passes through")
			} else {
				assert.NoError(t, err)
			}
			n, err = tc.call(panicker{})
			assert.Zero(t, n, "a call that panicked wrote nothing")
			var pe *PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.op, pe.Op)
			assert.Contains(t, err.Error(), "the output's "+tc.op+" panicked: ")
		})
	}
	p, ok := Path(quiet{})
	assert.True(t, ok)
	assert.Equal(t, "/var/log/app.log", p)
	p, ok = Path(panicker{})
	assert.False(t, ok)
	assert.Empty(t, p)
}
