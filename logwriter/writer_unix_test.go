//go:build unix

package logwriter

import (
	"path/filepath"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ring file (Options.Ring.File) needs mmap and flock.
func TestOpenWithRingFile(t *testing.T) {
	ring := filepath.Join(t.TempDir(), "app.ring")
	sink := &memSink{}
	w, err := Open(sink, &Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 64 << 10}})
	require.NoError(t, err)
	_, err = Open(&memSink{}, &Options{Ring: asyncbus.RingOptions{File: ring, Capacity: 64 << 10}})
	require.ErrorIs(t, err, asyncbus.ErrRingLocked, "one Writer per ring file")
	for i := range 3 {
		_, err := w.Write([]byte(writerLine(asyncbus.JSON, i)))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	assert.Len(t, sink.Lines(), 3)
	st := w.Stats()
	assert.EqualValues(t, 3, st.Written)
	assert.Zero(t, st.Recovered, "a fresh ring file holds nothing to replay")
}
