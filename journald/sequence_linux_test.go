package journald

import (
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// seqOf returns an entry's ASYNCBUS_SEQ and ASYNCBUS_RUN, which must be
// its first two fields, and its ASYNCBUS_DROPPED (0 if none).
func seqOf(t *testing.T, r received) (seq uint64, run string, dropped uint64) {
	t.Helper()
	require.GreaterOrEqual(t, len(r.Fields), 2, "%q", r.Raw)
	require.Equal(t, "ASYNCBUS_SEQ", r.Fields[0].Name, "%q", r.Raw)
	require.Equal(t, "ASYNCBUS_RUN", r.Fields[1].Name, "%q", r.Raw)
	seq, err := strconv.ParseUint(r.Fields[0].Value, 10, 64)
	require.NoError(t, err)
	if d := get(r.Fields, "ASYNCBUS_DROPPED"); len(d) > 0 {
		dropped, err = strconv.ParseUint(d[0], 10, 64)
		require.NoError(t, err)
	}
	return seq, r.Fields[1].Value, dropped
}

func TestSequenceFieldsNumberEntriesInOrder(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path, Identifier: "app"})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(&asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	for i := range 50 {
		l.Info("hello", "i", i)
	}
	require.NoError(t, h.Close())
	run := h.Stats().RunID
	require.Len(t, run, 16)
	got := j.drain(t)
	require.Len(t, got, 50)
	assert.Equal(t, "ASYNCBUS_SEQ=1\nASYNCBUS_RUN="+run+"\nPRIORITY=6\nMESSAGE=hello\nSYSLOG_IDENTIFIER=app\nI=0\n", string(got[0].Raw))
	for i, r := range got {
		seq, gotRun, _ := seqOf(t, r)
		assert.EqualValues(t, i+1, seq)
		assert.Equal(t, run, gotRun)
		assert.Equal(t, []string{strconv.Itoa(i)}, get(r.Fields, "I"))
	}
}

// Drop mode with the drainer held in a send: the records that find the
// ring full are lost, and the marker at their gap is an entry numbered
// with the first lost record's number, carrying the count.
func TestSequenceDropMarkerAccountsForTheGap(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(&asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4 << 10, Overflow: asyncbus.Drop}, Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	s.mu.Lock() // the drainer's next send waits here
	logged := 0
	for h.Stats().Dropped < 5 {
		l.Info("filler", "i", logged)
		logged++
		require.Less(t, logged, 100000, "nothing was dropped")
	}
	s.mu.Unlock()
	l.Info("after", "i", logged)
	logged++
	require.NoError(t, h.Close())
	st := h.Stats()
	require.EqualValues(t, logged, st.Written+st.Dropped)

	next, markers, lost := uint64(1), 0, uint64(0)
	for _, r := range j.drain(t) {
		seq, run, dropped := seqOf(t, r)
		require.Equal(t, st.RunID, run)
		require.Equal(t, next, seq, "%q", r.Raw)
		if dropped > 0 {
			assert.Equal(t, []string{"asyncbus: records dropped"}, get(r.Fields, "MESSAGE"))
			assert.Equal(t, []string{"4"}, get(r.Fields, "PRIORITY"))
			markers++
			lost += dropped
			next += dropped
			continue
		}
		next++
	}
	assert.EqualValues(t, logged+1, next, "every record's number is an entry's or a marker's")
	assert.Equal(t, st.Dropped, lost)
	assert.EqualValues(t, st.DropMarkers, markers)
	assert.Positive(t, markers)
	assert.Zero(t, s.Stats().Foreign, "the markers are the journal's own entries")
}

// An Error record waits for its write (a socket is never written on the
// caller's goroutine: the handler's own tests cover those): it takes its
// number in order with the records around it.
func TestSequenceErrorRecordsInOrder(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(&asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}})
	require.NoError(t, err)
	l := slog.New(h)
	for i := range 20 {
		if i%5 == 4 {
			l.Error("bad", "i", i)
		} else {
			l.Info("ok", "i", i)
		}
	}
	require.NoError(t, h.Close())
	got := j.drain(t)
	require.Len(t, got, 20)
	for i, r := range got {
		seq, _, _ := seqOf(t, r)
		assert.EqualValues(t, i+1, seq)
		assert.Equal(t, []string{strconv.Itoa(i)}, get(r.Fields, "I"))
	}
}

func TestSequenceOffWritesNoFields(t *testing.T) {
	j := startJournal(t)
	s, err := NewSink(Options{Socket: j.path, Identifier: "app"})
	require.NoError(t, err)
	defer s.Close()
	h, err := s.NewHandler(nil)
	require.NoError(t, err)
	slog.New(h).Info("hello")
	require.NoError(t, h.Close())
	got := j.drain(t)
	require.Len(t, got, 1)
	assert.Equal(t, "PRIORITY=6\nMESSAGE=hello\nSYSLOG_IDENTIFIER=app\n", string(got[0].Raw))
	assert.Empty(t, h.Stats().RunID)
}
