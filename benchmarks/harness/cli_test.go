package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 16, 1,4,1 ,")
	require.NoError(t, err)
	assert.Equal(t, []int{16, 1, 4}, got)
}
