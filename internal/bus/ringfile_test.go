//go:build unix

package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus/internal/ringfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errLog collects OnError calls.
type errLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errLog) on(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

func (l *errLog) ringErrors() []*RingFileError {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*RingFileError
	for _, err := range l.errs {
		var re *RingFileError
		if errors.As(err, &re) {
			out = append(out, re)
		}
	}
	return out
}

func line(i int) []byte { return fmt.Appendf(nil, "record %06d %s\n", i, strings.Repeat("x", i%37)) }

// openDurable starts a bus on a ring file, replaying into sink.
func openDurable(t *testing.T, path string, sink interface{ Write([]byte) (int, error) }, cfg Config) (*Bus, *errLog) {
	t.Helper()
	log := &errLog{}
	cfg.RingFile = path
	cfg.OnError = log.on
	b, err := testNew(sink, cfg)
	require.NoError(t, err)
	return b, log
}

func strs(recs [][]byte) []string {
	if len(recs) == 0 {
		return nil
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	return out
}

func TestRingFileCleanRestartRecoversNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring")
	sink := &batchSink{}
	b, _ := openDurable(t, path, sink, Config{Capacity: 4096})
	var want []string
	for i := range 500 { // several laps of a 4 KiB ring
		require.NoError(t, b.Enqueue(line(i)))
		want = append(want, string(line(i)))
	}
	closeBus(t, b)
	assert.Equal(t, want, strs(sink.records()))

	sink2 := &batchSink{}
	b2, log := openDurable(t, path, sink2, Config{Capacity: 4096})
	closeBus(t, b2)
	assert.Empty(t, sink2.records())
	assert.Zero(t, b2.Stats().Recovered)
	assert.Empty(t, log.ringErrors())
}

func TestRingFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring")
	b, _ := openDurable(t, path, &batchSink{}, Config{Capacity: 4096})
	_, err := testNew(&batchSink{}, Config{RingFile: path, Capacity: 4096})
	require.ErrorIs(t, err, ErrRingLocked)
	assert.Contains(t, err.Error(), path)
	closeBus(t, b) // releases the lock
	b2, _ := openDurable(t, path, &batchSink{}, Config{Capacity: 4096})
	closeBus(t, b2)
}

func TestRingFileConfigErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := testNew(&batchSink{}, Config{RingFile: filepath.Join(dir, "no", "such", "dir", "r")})
	require.Error(t, err)
	require.Panics(t, func() {
		_, _ = testNew(&batchSink{}, Config{RingFile: filepath.Join(dir, "r"), minBatch: -1})
	})
	_, statErr := os.Stat(filepath.Join(dir, "r"))
	assert.ErrorIs(t, statErr, os.ErrNotExist, "invalid configuration must not touch the file")
}

func TestRingFileCapacityChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring")
	im := newImage(1024)
	pos := uint64(0)
	var want []string
	for i := range 6 {
		pos = im.record(pos, line(i))
		want = append(want, string(line(i)))
	}
	require.NoError(t, os.WriteFile(path, im.bytes(), 0o600))
	sink := &batchSink{}
	b, _ := openDurable(t, path, sink, Config{Capacity: 4096})
	assert.Equal(t, want, strs(sink.records()))
	assert.Equal(t, uint64(4096), b.Stats().Capacity)
	for i := range 200 {
		require.NoError(t, b.Enqueue(line(i)))
	}
	closeBus(t, b)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(ringfile.HeaderSize+4096), fi.Size())
}

// An oversize record's bytes are on the heap, not in the ring file: with a
// ring file, Enqueue returns only once the output has it, so a kill -9
// right after cannot lose it. A ring record does not wait.
func TestOversizeRecordWrittenBeforeEnqueueReturns(t *testing.T) {
	sink := &batchSink{}
	b, err := testNew(sink, Config{RingFile: filepath.Join(t.TempDir(), "ring"), Capacity: 4096, MaxLatency: time.Hour})
	require.NoError(t, err)
	big := payload(1, 2000) // > Capacity/8
	require.NoError(t, b.Enqueue(big))
	require.Equal(t, [][]byte{big}, sink.records(), "written before Enqueue returned")
	require.NoError(t, b.Close(context.Background()))
	st := b.Stats()
	assert.EqualValues(t, 1, st.Oversize)
	requireAccounting(t, st)
}
