package bus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
