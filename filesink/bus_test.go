package filesink_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
)

// File is a batch sink and a Syncer for the bus (the methods the handler
// looks for).
var (
	_ interface {
		WriteBatch([][]byte) (int, error)
	} = (*filesink.File)(nil)
	_ interface{ Sync() error } = (*filesink.File)(nil)
)

func TestThroughAsyncbusHandler(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	f, err := filesink.Open(path, filesink.Options{MaxSize: 16 << 10, MaxBackups: 100, Compress: true})
	require.NoError(t, err)
	h := asyncbus.NewHandler(f, nil)
	log := slog.New(h)
	const n = 2000
	for i := range n {
		log.Info("through the bus", "i", i, "pad", strings.Repeat("x", i%200))
	}
	require.NoError(t, h.Flush())
	st := h.Stats()
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())
	assert.EqualValues(t, n, st.Written)
	assert.Zero(t, st.Failed)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	backups := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log.gz") {
			backups++
		}
	}
	assert.Greater(t, backups, 1, "rotated by size and compressed")

	// The live file holds the newest records, whole, in order.
	in, err := os.Open(path)
	require.NoError(t, err)
	defer in.Close()
	prev := -1
	s := bufio.NewScanner(in)
	for s.Scan() {
		var r struct{ I int }
		require.NoError(t, json.Unmarshal(s.Bytes(), &r))
		if prev >= 0 {
			assert.Equal(t, prev+1, r.I)
		}
		prev = r.I
	}
	require.NoError(t, s.Err())
	assert.Equal(t, n-1, prev)
}
