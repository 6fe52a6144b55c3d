package bus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Producers blocked for room are admitted in the order they arrived: with
// a ring far smaller than what the blocked producers want, no call waits
// for more output than the ring's bytes and one record of every producer
// ahead of it (a newcomer never takes the room a waiter was woken for).
func TestBlockedProducersAdmittedInOrder(t *testing.T) {
	const capacity, producers, size = 1024, 16, 128
	w := newPacedWriter(64, time.Millisecond)
	b := newTestBus(t, w, Config{Capacity: capacity, Overflow: Block}, nil)
	maxWait, counts := blockedWaits(t, b, w, producers, size, 24<<10, nil)
	closeBus(t, b)
	requireAccounting(t, b.Stats())
	span := align8(hdrSize + size)
	bound := capacity + producers*span + uint64(w.chunk)
	assert.LessOrEqual(t, maxWait, bound, "the longest wait, in bytes of output; records per producer %v", counts)
	for p, n := range counts {
		assert.Greater(t, n, 0, "producer %d got records in", p)
	}
}

// A producer that finds others in line for room queues behind them unless
// the ring has room for its entry beyond what theirs need; one that
// queues gets its turn when the line ahead leaves.
func TestNewcomerQueuesOnlyForTheLinesRoom(t *testing.T) {
	const capacity, lineNeed = 4096, 1024
	for _, tc := range []struct {
		name         string
		queued       uint64 // bytes in the ring (tail - head)
		total        uint64 // the newcomer's entry
		joinsTheLine bool
	}{
		{"room to spare", 0, 1024, false},
		{"exactly the room beyond the line's", 2048, 1024, false},
		{"room the line needs", 2056, 1024, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBus(t, &streamSink{}, Config{Capacity: capacity, Overflow: Block}, nil)
			waiter := waitState{need: lineNeed}
			require.True(t, b.join(&waiter))
			require.True(t, waiter.front)
			newcomer := waitState{need: tc.total}
			done := make(chan bool, 1)
			go func() {
				again, err := b.awaitTurn(&newcomer, tc.queued, 0, tc.total)
				assert.NoError(t, err)
				done <- again
			}()
			if !tc.joinsTheLine {
				assert.False(t, <-done, "reserves at once")
				assert.Equal(t, uint64(lineNeed), b.lineBytes.Load(), "not in line")
			} else {
				waitFor(t, "the newcomer in line", func() bool { return b.lineBytes.Load() == lineNeed+tc.total })
				b.leaveLine(&waiter) // the front reserved: the next one's turn
				assert.True(t, <-done, "its turn: it loads the cursors again")
				assert.True(t, newcomer.front)
				b.leaveLine(&newcomer)
			}
			b.leaveLine(&waiter)
			assert.Zero(t, b.lineBytes.Load(), "the line is empty")
			closeBus(t, b)
		})
	}
}
