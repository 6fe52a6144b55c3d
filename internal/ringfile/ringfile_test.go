package ringfile

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnsupportedNamesThePlatform: where ring files cannot work (no mmap
// and flock: Windows, js, wasip1, AIX), Open's error says which option and
// which system, and matches ErrUnsupported.
func TestUnsupportedNamesThePlatform(t *testing.T) {
	err := errUnsupported()
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "Options.Ring.File")
	assert.Contains(t, err.Error(), runtime.GOOS+"/"+runtime.GOARCH)
}
