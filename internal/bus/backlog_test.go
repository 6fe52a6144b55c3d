package bus

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// backlogSink asks the bus for its backlog in each of its write calls.
// The first call after hold is set signals entered, then waits until hold
// is closed.
type backlogSink struct {
	b       *Bus
	entered chan struct{}
	mu      sync.Mutex
	hold    chan struct{}
	seen    []uint64 // Backlog in each call, after the hold
}

func (s *backlogSink) WriteBatch(recs [][]byte) (int, error) {
	s.mu.Lock()
	hold := s.hold
	s.hold = nil
	s.mu.Unlock()
	if hold != nil {
		s.entered <- struct{}{}
		<-hold
	}
	s.mu.Lock()
	s.seen = append(s.seen, s.b.Backlog())
	s.mu.Unlock()
	return len(recs), nil
}

func (s *backlogSink) Write(p []byte) (int, error) { return s.WriteBatch([][]byte{p}) }

// TestBacklogCountsTheRecordsBehindTheBatch: while the output writes one
// record, Backlog counts exactly those enqueued behind it, whatever their
// size, an oversize record as one and the padding at the ring's end as none.
func TestBacklogCountsTheRecordsBehindTheBatch(t *testing.T) {
	cases := []struct {
		name   string
		wrap   bool  // move the ring's positions first, so that the records behind wrap
		sizes  []int // records enqueued while the output writes the first
		maxRec int
	}{
		{name: "none behind"},
		{name: "small records", sizes: []int{1, 2, 3, 4, 5}},
		{name: "records of mixed sizes", sizes: []int{300, 8, 17, 120}},
		{name: "an oversize record", sizes: []int{10, 200, 10}, maxRec: 64},
		{name: "across the ring's end", wrap: true, sizes: []int{100, 100, 100, 100, 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &backlogSink{entered: make(chan struct{})}
			b := newTestBus(t, s, Config{Capacity: 1024, maxRecord: tc.maxRec}, func(b *Bus) { s.b = b })
			if tc.wrap {
				// 7 entries of 112 bytes, then the first record's 24: the
				// third of those behind finds 104 bytes before the end.
				for range 7 {
					require.NoError(t, b.Enqueue(bytes.Repeat([]byte{'w'}, 100)))
				}
				require.NoError(t, b.Flush(t.Context()))
			}
			hold := make(chan struct{})
			s.mu.Lock()
			s.hold, s.seen = hold, nil
			s.mu.Unlock()
			require.NoError(t, b.Enqueue([]byte("first rec")))
			<-s.entered
			for _, n := range tc.sizes {
				require.NoError(t, b.Enqueue(bytes.Repeat([]byte{'r'}, n)))
			}
			close(hold)
			closeBus(t, b)
			s.mu.Lock()
			defer s.mu.Unlock()
			require.NotEmpty(t, s.seen)
			require.EqualValues(t, len(tc.sizes), s.seen[0])
			require.Zero(t, s.seen[len(s.seen)-1], "nothing behind the last batch")
		})
	}
}
