package filesink

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// outage fails every writev with ENOSPC while down is set.
type outage struct{ down atomic.Bool }

func (o *outage) writev(fd int, iovs [][]byte) (int, error) {
	if o.down.Load() {
		return 0, syscall.ENOSPC
	}
	return writevFD(fd, iovs)
}

// TestFailedWritesCountedInHandlerStats: records the disk refuses end up in
// the handler's Stats as Failed, the error callback fires, and writing
// resumes once the disk has space again.
func TestFailedWritesCountedInHandlerStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	var o outage
	o.down.Store(true)
	var sinkErrs errSink
	f, err := open(path, Options{OnError: sinkErrs.On}, func(f *File) { f.writev = o.writev })
	require.NoError(t, err)

	var busErrs atomic.Int64
	h := asyncbus.NewHandler(f, &asyncbus.Options{OnError: func(error) { busErrs.Add(1) }})
	l := slog.New(h)
	const lost, kept = 10, 5
	for i := range lost {
		l.Info("during the outage", "seq", i)
	}
	err = h.FlushContext(context.Background())
	require.Error(t, err, "Flush reports records that could not be written")
	assert.True(t, errors.Is(err, syscall.ENOSPC), "the cause is kept: %v", err)

	o.down.Store(false)
	for i := range kept {
		l.Info("after the outage", "seq", lost+i)
	}
	require.NoError(t, h.Close())
	require.NoError(t, f.Close())

	st := h.Stats()
	assert.EqualValues(t, lost, st.Failed)
	assert.EqualValues(t, kept, st.Written)
	assert.EqualValues(t, lost+kept, st.Enqueued)
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
	assert.Positive(t, busErrs.Load(), "the handler's error callback fired")
	assert.NotEmpty(t, sinkErrs.All(), "the sink's error callback fired")
	assert.Len(t, readLines(t, path), kept, "only the records written after the outage are in the file")
}
