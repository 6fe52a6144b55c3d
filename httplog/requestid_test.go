package httplog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"", false},
		{"a", true},
		{strings.Repeat("a", maxIDLen), true},
		{strings.Repeat("a", maxIDLen+1), false},
		{"a b", false},
		{"a\nb", false},
		{"é", false},
		{"req-42_x", true},
	} {
		assert.Equal(t, tc.want, validID(tc.id), "%q", tc.id)
	}
}

func TestNewID(t *testing.T) {
	a, b := newID(), newID()
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, idPrefix+"-"), a)
	assert.Len(t, idPrefix, 16)
	assert.True(t, validID(a))
}
