package asyncbus

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestConsoleColourFollowsOption(t *testing.T) {
	for _, tt := range []struct {
		mode  ColorMode
		color bool
	}{{ColorAuto, false}, {ColorAlways, true}, {ColorNever, false}} {
		var sink memSink
		h := NewHandler(&sink, &Options{Format: Console, Encoding: EncodingOptions{Color: tt.mode}})
		slog.New(h).Warn("careful", "k", "v")
		require.NoError(t, h.Close())
		assert.Equal(t, tt.color, strings.Contains(sink.String(), "\x1b["), "mode %d on a non-terminal", tt.mode)
	}
}
