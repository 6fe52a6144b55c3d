package bus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritevPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	got := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(r)
		got <- data
	}()
	b := newTestBus(t, w, Config{Capacity: 1 << 14}, nil)
	require.Equal(t, outputWritev, b.kind)
	var want bytes.Buffer
	for i := range 20000 {
		p := payload(i, 1+i%200)
		require.NoError(t, b.Enqueue(p))
		want.Write(p)
	}
	closeBus(t, b)
	require.NoError(t, w.Close())
	require.Equal(t, want.Bytes(), <-got)
	require.NoError(t, r.Close())
	st := b.Stats()
	requireAccounting(t, st)
	require.Less(t, st.WriteCalls, st.Written/4)
}

// TestWritevFailureOnClosedFileCountsFailed: when the file is closed under
// the bus, rc.Write fails without running the syscall; the bytes of the
// previous writev must not be counted again as written.
func TestWritevFailureOnClosedFileCountsFailed(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	b, err := newBus(w, withMarker(Config{Capacity: 4096}), fastRetry)
	require.NoError(t, err)
	require.Equal(t, outputWritev, b.kind, "an *os.File pipe is written with writev")
	require.NoError(t, b.Enqueue([]byte("first-record\n")))
	require.NoError(t, b.Flush(context.Background()))
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "first-record\n", string(buf[:n]))

	require.NoError(t, w.Close()) // nothing more can be written
	require.NoError(t, b.Enqueue([]byte("x\n")))
	ferr := b.Flush(context.Background())
	_ = b.Close(context.Background())
	st := b.Stats()
	assert.EqualValues(t, 1, st.Written)
	assert.EqualValues(t, 1, st.Failed)
	var se *OutputError
	require.True(t, errors.As(ferr, &se), "Flush reports the failure: %v", ferr)
	assert.Equal(t, "write", se.Op)
}
