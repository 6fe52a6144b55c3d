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

func (o *outage) writev(fd handle, iovs [][]byte) (int, error) {
	if o.down.Load() {
		return 0, syscall.ENOSPC
	}
	return writevFD(fd, iovs)
}

// TestFailedWritesCountedInHandlerStats: records the disk refuses end up in
// the handler's Stats as Failed, the outage reaches the handler's OnError
// exactly once (not the sink's as well), and writing resumes once the disk
// has space again.
func TestFailedWritesCountedInHandlerStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	var o outage
	o.down.Store(true)
	var sinkErrs errSink
	f, err := open(path, Options{OnError: sinkErrs.On}, func(f *File) { f.writev = o.writev })
	require.NoError(t, err)

	var busErrs errSink
	h := asyncbus.NewHandler(f, &asyncbus.Options{OnError: busErrs.On})
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
	require.ErrorIs(t, h.Close(), syscall.ENOSPC, "Close reports the records lost in the outage too")
	require.NoError(t, f.Close())

	st := h.Stats()
	assert.EqualValues(t, lost, st.Failed)
	assert.EqualValues(t, kept, st.Written)
	assert.EqualValues(t, lost+kept, st.Enqueued)
	assert.Equal(t, st.Enqueued, st.Written+st.Dropped+st.Failed)
	reports := busErrs.All()
	require.Len(t, reports, 1, "one report for the outage: %v", reports)
	assert.Equal(t, "asyncbus: write "+path+": no space left on device", reports[0].Error())
	assert.ErrorIs(t, reports[0], syscall.ENOSPC)
	assert.Empty(t, sinkErrs.All(), "the sink does not report write errors itself")
	assert.Len(t, readLines(t, path), kept, "only the records written after the outage are in the file")
}
