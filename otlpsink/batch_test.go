package otlpsink

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
)

// TestRefusedRequestDoesNotFailTheRestOfItsBatch: a batch split by
// MaxRequestBytes, one of whose requests the collector refuses (400): the
// later requests are still sent, and the handler counts exactly the
// refused records as failed.
func TestRefusedRequestDoesNotFailTheRestOfItsBatch(t *testing.T) {
	rc := newReceiver(t)
	gate := make(chan struct{})
	var refused []int // seqs of the refused request, set by the receiver
	var mu sync.Mutex
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		switch i {
		case 0:
			<-gate // hold the first request so the rest queue up as one batch
		case 2:
			http.Error(w, "one bad request", http.StatusBadRequest)
			mu.Lock()
			refused = append(refused, i)
			mu.Unlock()
			return false
		}
		return true
	})
	o := testOptions(rc)
	o.MaxRequestBytes = 400
	s, err := NewSink(o)
	require.NoError(t, err)
	var reports []error
	h, err := s.NewHandler(&asyncbus.Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	require.NoError(t, err)
	log := slog.New(h)
	log.Info("first", "seq", 0)
	for rc.callCount() == 0 {
		runtime.Gosched() // the drainer's first request is held at the gate
	}
	const n = 50
	for i := 1; i <= n; i++ {
		log.Info("queued", "seq", i)
	}
	close(gate)
	require.Error(t, h.Flush(), "the refusal is reported to Flush")
	require.Error(t, h.Close(), "and to Close")
	st, hs := s.Stats(), h.Stats()
	got := rc.records()
	seen := map[int]bool{}
	for _, r := range got {
		seen[seqOf(t, r)] = true
	}
	assert.Len(t, seen, len(got), "no record sent twice")
	require.NotZero(t, st.FailedRecords, "one request was refused")
	assert.EqualValues(t, n+1, hs.Written+hs.Failed)
	assert.Equal(t, st.FailedRecords, hs.Failed, "the handler counts the refused records, not the unsent ones")
	assert.EqualValues(t, len(got), hs.Written, "Written are the records the collector accepted")
	assert.EqualValues(t, len(got), st.Sent)
	assert.EqualValues(t, 1, st.FailedBatches)
	mu.Lock()
	defer mu.Unlock()
	assert.NotEmpty(t, reports, "the refusal reached OnError")
	assert.Len(t, refused, 1, "the refused request was sent once")
}

func TestForeignRecordsSentAsText(t *testing.T) {
	rc := newReceiver(t)
	s, err := NewSink(testOptions(rc))
	require.NoError(t, err)
	n, err := s.WriteBatch([][]byte{[]byte("asyncbus: dropped 3 records\n")})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	recs := rc.records()
	require.Len(t, recs, 1)
	assert.Equal(t, str("asyncbus: dropped 3 records"), recs[0].Body)
	assert.Equal(t, 13, recs[0].Severity)
	assert.EqualValues(t, 1, s.Stats().Foreign)
}

func TestDropMarkerArrivesAsRecord(t *testing.T) {
	rc := newReceiver(t)
	block := make(chan struct{})
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i == 0 {
			<-block // hold the first batch so the ring fills
		}
		return true
	})
	h, err := NewHandler(testOptions(rc), &asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop, Capacity: 4096}})
	require.NoError(t, err)
	dropped := 0
	for i := 0; dropped == 0; i++ {
		if err := h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "fill "+strconv.Itoa(i), 0)); errors.Is(err, asyncbus.ErrDropped) {
			dropped++
		}
	}
	close(block)
	require.NoError(t, h.Close())
	found := false
	for _, r := range rc.records() {
		if r.Body.Kind == "string" && len(r.Body.Str) > 0 && r.SeverityText == "WARN" && r.Time == 0 {
			found = true
		}
	}
	assert.True(t, found, "the drop marker arrives as a WARN record")
	assert.NotZero(t, h.Stats().Dropped)
}

// TestConcurrentProducersExactlyOnceInOrder: producers log through a
// small ring while the collector refuses every third request; every
// record arrives exactly once, in per-producer order.
func TestConcurrentProducersExactlyOnceInOrder(t *testing.T) {
	rc := newReceiver(t)
	rc.setAnswer(func(i int, w http.ResponseWriter) bool {
		if i%3 == 1 {
			http.Error(w, "throttled", http.StatusTooManyRequests)
			return false
		}
		return true
	})
	o := testOptions(rc)
	o.RetryInitial, o.RetryMax = time.Millisecond, 2*time.Millisecond
	h, err := NewHandler(o, &asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{Capacity: 64 << 10}})
	require.NoError(t, err)
	const producers, each = 8, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			log := slog.New(h).With("p", p)
			for i := range each {
				log.LogAttrs(context.Background(), slog.LevelInfo, "stress", slog.Int("seq", i))
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Close())

	next := make([]int, producers)
	for _, r := range rc.records() {
		require.Len(t, r.Attrs, 2)
		p, seq := int(r.Attrs[0].Value.Int), int(r.Attrs[1].Value.Int)
		require.Equal(t, next[p], seq, "producer %d", p)
		next[p]++
	}
	for p, n := range next {
		require.Equal(t, each, n, "producer %d", p)
	}
	hs := h.Stats()
	require.EqualValues(t, producers*each, hs.Written)
	require.Zero(t, hs.Dropped+hs.Failed)
}

// TestRefusedDropMarkerDoesNotShiftWrittenAndFailed: the collector refuses
// every request holding a drop marker. The bus counts a batch by position
// and a marker only ever opens one, so the Sink leaves a refused marker out
// of the failed records it returns: the handler's Written and Failed are
// exactly the user records the collector accepted and refused, whether the
// marker went alone (one record per request) or with user records, and
// whether it is the handler's text or, with sequence numbers, a LogRecord
// of the encoder's own.
func TestRefusedDropMarkerDoesNotShiftWrittenAndFailed(t *testing.T) {
	for _, tc := range []struct {
		name            string
		maxRequestBytes int
		sequence        bool
	}{
		{"marker alone in its request", 1, false},
		{"marker sharing its request", 0, false},
		{"numbered marker alone in its request", 1, true},
		{"numbered marker sharing its request", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate0, gate1 := make(chan struct{}), make(chan struct{})
			arrived := make(chan int, 1<<12)
			var mu sync.Mutex
			var accepted, refused [][]byte // request bodies, decoded on the test goroutine
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				i := calls
				calls++
				mu.Unlock()
				arrived <- i
				switch i {
				case 0:
					<-gate0 // the ring fills behind the first request
				case 1:
					<-gate1 // records logged now follow the gap: the marker's batch
				}
				mu.Lock()
				defer mu.Unlock()
				if bytes.Contains(b, []byte(encode.DropMessage)) {
					refused = append(refused, b)
					http.Error(w, "no markers here", http.StatusBadRequest)
					return
				}
				accepted = append(accepted, b)
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			o := Options{Endpoint: srv.URL, Headers: map[string]string{}, Compression: "none",
				RetryInitial: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond, Timeout: 5 * time.Second,
				MaxRequestBytes: tc.maxRequestBytes}
			s, err := NewSink(o)
			require.NoError(t, err)
			h, err := s.NewHandler(&asyncbus.Options{OnError: func(error) {}, Ring: asyncbus.RingOptions{Capacity: 8192, Overflow: asyncbus.Drop}, Features: asyncbus.FeatureOptions{Sequence: tc.sequence}})
			require.NoError(t, err)
			log := slog.New(h)
			log.Info("first", "pad", strings.Repeat("x", 900))
			<-arrived // request 0 held
			for i := range 300 {
				log.Info("r", "seq", i)
			}
			require.NotZero(t, h.Stats().Dropped, "the ring overflowed")
			close(gate0)
			<-arrived // request 1 held; the first record's space is free
			for i := 300; i < 305; i++ {
				log.Info("r", "seq", i)
			}
			close(gate1)
			_ = h.Flush()
			if cerr := h.Close(); h.Stats().Failed > 0 {
				require.Error(t, cerr, "Close reports the refused request's records")
			} else {
				require.NoError(t, cerr)
			}

			mu.Lock()
			defer mu.Unlock()
			userRecords := func(bodies [][]byte) (users, markers int) {
				for _, b := range bodies {
					for _, r := range decodeRequest(t, b).Records {
						if r.Body.Kind == "string" && strings.Contains(r.Body.Str, encode.DropMessage) {
							markers++
						} else {
							users++
						}
					}
				}
				return users, markers
			}
			acceptedUsers, acceptedMarkers := userRecords(accepted)
			refusedUsers, refusedMarkers := userRecords(refused)
			require.Zero(t, acceptedMarkers)
			require.Equal(t, 1, refusedMarkers, "one drop marker, refused")
			hs, st := h.Stats(), s.Stats()
			assert.EqualValues(t, refusedUsers, hs.Failed, "Failed are the user records the collector refused")
			assert.EqualValues(t, acceptedUsers, hs.Written, "Written are the user records the collector accepted")
			assert.EqualValues(t, hs.Enqueued-hs.Dropped, hs.Written+hs.Failed, "every record kept is counted once")
			assert.EqualValues(t, refusedUsers+refusedMarkers, st.FailedRecords, "the Sink counts the refused marker too")
			assert.EqualValues(t, len(refused), st.FailedBatches)
		})
	}
}
