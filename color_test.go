package asyncbus

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUseColorModes: ColorAlways and ColorNever ignore the environment.
func TestUseColorModes(t *testing.T) {
	var buf bytes.Buffer
	t.Setenv("NO_COLOR", "1")
	assert.True(t, useColor(ColorAlways, &buf))
	t.Setenv("NO_COLOR", "")
	t.Setenv("FORCE_COLOR", "1")
	assert.False(t, useColor(ColorNever, &buf))
	assert.True(t, useColor(ColorAuto, &buf), "FORCE_COLOR colours a buffer")
}
