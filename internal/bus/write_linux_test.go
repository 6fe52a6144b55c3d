//go:build linux

package bus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Into a regular file the drainer starts the kernel's write-back every
// ring of bytes written, so that a sync has at most about a ring to
// write; into a pipe it starts none.
func TestWritebackStartedEveryRingIntoAFile(t *testing.T) {
	const capacity = 64 << 10
	f, err := os.Create(filepath.Join(t.TempDir(), "app.log"))
	require.NoError(t, err)
	defer f.Close()
	b := newTestBus(t, f, Config{Capacity: capacity}, nil)
	rec := payload(0, 200)
	for range 1000 { // 200 KB: three rings' worth
		require.NoError(t, b.Enqueue(rec))
	}
	closeBus(t, b)
	require.NotNil(t, b.d.wb)
	assert.GreaterOrEqual(t, b.d.wb.Started(), 2, "write-backs started for %d bytes", b.Stats().WrittenBytes)
	assert.LessOrEqual(t, b.d.wb.Started(), 3)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	p := newTestBus(t, w, Config{Capacity: capacity}, nil)
	assert.Nil(t, p.d.wb, "a pipe has no write-back to start")
	closeBus(t, p)
	_ = w.Close()
}
