package writeback

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Pacer is made for a regular file only, and says a write-back is due
// once every Every bytes.
func TestPacerForRegularFilesEveryEveryBytes(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "app.log"))
	require.NoError(t, err)
	defer f.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"regular file", f, supported},
		{"pipe", w, false},
		{"buffer", &bytes.Buffer{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, New(tc.w, 100) != nil)
		})
	}
	if !supported {
		return
	}
	p := New(f, 100)
	assert.False(t, p.Due(60), "60 of 100 bytes")
	assert.True(t, p.Due(60), "120: due")
	assert.False(t, p.Due(99), "counted afresh")
	assert.True(t, p.Due(1))
	_, err = f.Write(bytes.Repeat([]byte("line\n"), 1000))
	require.NoError(t, err)
	assert.NoError(t, p.Start(), "a write-back of written pages starts")
	assert.Equal(t, 1, p.Started())
}
