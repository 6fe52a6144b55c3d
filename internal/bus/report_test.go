package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSinkErrorText(t *testing.T) {
	tests := []struct {
		name               string
		failed, suppressed uint64
		want               string
	}{
		{"plural", 3, 2, "asyncbus: write /var/log/app.log: sink broken (3 records failed) (2 similar errors suppressed)"},
		{"singular", 1, 1, "asyncbus: write /var/log/app.log: sink broken (1 record failed) (1 similar error suppressed)"},
		{"no counts", 0, 0, "asyncbus: write /var/log/app.log: sink broken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &OutputError{Op: "write", Output: "/var/log/app.log", Err: errSink, Failed: tt.failed, Suppressed: tt.suppressed}
			require.Equal(t, tt.want, err.Error())
			require.ErrorIs(t, err, errSink)
		})
	}
}

func TestOnErrorRateLimited(t *testing.T) {
	var clock atomic.Int64
	sink := &batchSink{fail: func(int) error { return errSink }}
	var got []*OutputError
	var mu sync.Mutex
	cfg := Config{Capacity: 1024, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		var se *OutputError
		require.ErrorAs(t, err, &se)
		got = append(got, se)
	}}
	b := newTestBus(t, sink, cfg, func(b *Bus) {
		fastRetry(b)
		b.retries = 1
		b.d.now = func() time.Time { return time.Unix(0, clock.Load()) }
	})
	for i := range 5 {
		require.NoError(t, b.Enqueue(payload(i, 10)))
		require.ErrorIs(t, b.Flush(context.Background()), errSink)
	}
	clock.Add(int64(time.Second))
	require.NoError(t, b.Enqueue(payload(9, 10)))
	require.ErrorIs(t, b.Flush(context.Background()), errSink)
	err := b.Close(context.Background())
	require.ErrorIs(t, err, errSink, "Close reports the records that failed before it")
	require.ErrorContains(t, err, "(6 records failed)")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	require.Zero(t, got[0].Suppressed)
	require.EqualValues(t, 4, got[1].Suppressed)
	st := b.Stats()
	requireAccounting(t, st)
	require.EqualValues(t, 6, st.Failed)
}

// TestOnErrorMayUseTheBus: OnError runs off the drainer,
// so a callback that enqueues into a full Block ring, flushes or closes the
// same bus does not deadlock, and its reports are delivered.
func TestOnErrorMayUseTheBus(t *testing.T) {
	cases := []struct {
		name string
		use  func(b *Bus)
	}{
		{"enqueue into a full ring", func(b *Bus) {
			for i := range 100 {
				_ = b.Enqueue(rec(nil, 1, i, 100)) // 100 x 100 bytes: far more than the 1 KiB ring
			}
		}},
		{"flush", func(b *Bus) { _ = b.Flush(context.Background()) }},
		{"close", func(b *Bus) { _ = b.Close(context.Background()) }},
		// Deeper than reporter.InCallback's first 256-frame look at the stack.
		{"close 300 frames deep", func(b *Bus) { atDepth(300, func() { _ = b.Close(context.Background()) }) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &switchWriter{}
			w.broken.Store(true)
			var bus atomic.Pointer[Bus]
			var mu sync.Mutex
			var reports []error
			cfg := Config{Capacity: 1024, Overflow: Block, OnError: func(err error) {
				mu.Lock()
				reports = append(reports, err)
				mu.Unlock()
				tc.use(bus.Load())
			}}
			b := newTestBus(t, w, cfg, func(b *Bus) {
				fastRetry(b)
				bus.Store(b)
			})
			guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			closed := make(chan error, 1)
			go func() {
				for i := range 20 {
					_ = b.Enqueue(rec(nil, 0, i, 40))
				}
				// A Flush before Close: Close would also end a
				// callback's wait for ring space (Enqueue returns
				// ErrClosed), Flush needs the drainer itself.
				if err := b.Flush(guard); errors.Is(err, context.DeadlineExceeded) {
					closed <- err
					return
				}
				closed <- b.Close(guard)
			}()
			var err error
			select {
			case err = <-closed:
			case <-guard.Done():
				t.Fatalf("deadlock: logging and Close did not return: %+v", b.Stats())
			}
			require.NotErrorIs(t, err, context.DeadlineExceeded, "Close deadlocked")
			if err != nil { // nil when the Flush answered every failure
				require.ErrorIs(t, err, errSink)
			}
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, reports)
			require.ErrorIs(t, reports[0], errSink)
			requireAccounting(t, b.Stats())
		})
	}
}

// atDepth calls f with at least depth more frames on the stack.
//
//go:noinline
func atDepth(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	atDepth(depth-1, f)
}

// TestReportQueueOverflowIsCounted: reports that find the queue full are
// not lost silently: their number is delivered as one report.
func TestReportQueueOverflowIsCounted(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	cfg := Config{Capacity: 1024, OnError: func(err error) {
		<-release
		mu.Lock()
		got = append(got, err.Error())
		mu.Unlock()
	}}
	b := newTestBus(t, &switchWriter{}, cfg, nil)
	// The drainer has nothing to report (its output works): send from here
	// as it would. One report is being delivered, 64 wait, the rest are
	// counted.
	const n = 100
	for i := range n {
		b.rep.Send(fmt.Errorf("report %d", i))
	}
	close(release)
	closeBus(t, b)
	mu.Lock()
	defer mu.Unlock()
	lost, delivered := 0, 0
	for _, s := range got {
		var k int
		if _, err := fmt.Sscanf(s, "asyncbus: %d error reports lost", &k); err == nil {
			lost += k
			continue
		}
		delivered++
	}
	require.Positive(t, lost)
	require.Equal(t, n, delivered+lost, "every report delivered or counted: %q", got)
}
