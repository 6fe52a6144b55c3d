package otlpsink

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// TestCloseContextGivingUpOnAHungCollectorCountsAtOnce: a collector that
// never answers; when CloseContext gives up, the handler's and the Sink's
// counts already say that the records failed (the Sink's: the batch it
// was given, whose size depends on how many records the drainer gathered
// before sending), and the request's late end counts nothing more.
func TestCloseContextGivingUpOnAHungCollectorCountsAtOnce(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		name := map[bool]string{false: "deadline", true: "cancelled"}[cancelled]
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t)
			hung := make(chan struct{}, 1)
			release := make(chan struct{})
			rc.setAnswer(func(int, http.ResponseWriter) bool {
				select {
				case hung <- struct{}{}:
				default:
				}
				<-release
				return false
			})
			t.Cleanup(func() { close(release) })
			s, err := NewSink(testOptions(rc))
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}})
			require.NoError(t, err)
			for i := range 10 {
				slog.New(h).Info("lost", "seq", i)
			}
			<-hung // the batch is in flight
			for i := range 5 {
				slog.New(h).Info("queued", "seq", 10+i)
			}
			var ctx context.Context
			var cancel context.CancelFunc
			if cancelled {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
			} else {
				ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
			}
			defer cancel()
			require.Error(t, h.CloseContext(ctx))

			hs, ss := h.Stats(), s.Stats()
			assert.EqualValues(t, 15, hs.Failed, "the handler's books: in flight and queued")
			// The Sink counts what it was given: the batch in flight, however
			// many of the first records the drainer had gathered into it.
			inFlight := len(rc.lastRequest().Records)
			require.Positive(t, inFlight)
			assert.EqualValues(t, inFlight, ss.FailedRecords, "the Sink's books are final when Close returns")
			assert.EqualValues(t, 1, ss.FailedBatches)
			assert.Zero(t, ss.Sent)

			// The hung request ends (the Sink's context is cancelled at the
			// close deadline); the drainer's call returns: nothing changes.
			_ = h.Flush()
			assert.Equal(t, ss, s.Stats())
			assert.Equal(t, hs.Failed, h.Stats().Failed)
		})
	}
}
