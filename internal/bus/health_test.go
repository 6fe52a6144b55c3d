package bus

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutputHealthTransitions(t *testing.T) {
	for _, tc := range []struct {
		from outputHealth
		on   healthEvent
		want outputHealth
	}{
		{healthy, evProgress, healthy},
		{healthy, evGiveUp, failing},
		{healthy, evProbeDue, healthy},
		{healthy, evTear, torn},
		{healthy, evMended, healthy},

		{failing, evProgress, healthy},
		{failing, evGiveUp, failing},
		{failing, evProbeDue, probing},
		{failing, evTear, failing}, // the probe writes the owed bytes first
		{failing, evMended, failing},

		{probing, evProgress, healthy},
		{probing, evGiveUp, failing},
		{probing, evProbeDue, probing},
		{probing, evTear, torn},
		{probing, evMended, probing},

		{torn, evProgress, torn}, // still owes the bytes that end the fragment
		{torn, evGiveUp, failing},
		{torn, evProbeDue, torn},
		{torn, evTear, torn},
		{torn, evMended, healthy},
	} {
		t.Run(tc.from.String()+"/"+[...]string{"progress", "give-up", "probe-due", "tear", "mended"}[tc.on], func(t *testing.T) {
			assert.Equal(t, tc.want, tc.from.next(tc.on))
		})
	}
}

// The drainer's health over a real outage: attempts spent (failing), the
// probe (probing) that makes no progress (failing again), then one that
// does (healthy).
func TestOutputHealthOverAnOutage(t *testing.T) {
	sink := &switchSink{}
	b := newTestBus(t, sink, Config{Capacity: 4096, WriteAttempts: 2}, fastRetry)
	sink.down.Store(true)
	_ = b.Enqueue(payload(1, 10))
	assert.Error(t, b.Flush(t.Context()))
	sink.down.Store(false)
	_ = b.Enqueue(payload(2, 10))
	assert.NoError(t, b.Flush(t.Context()), "the Flush's probe writes: healthy again")
	closeBusFailed(t, b, errDown)
	assert.Equal(t, healthy, b.d.health)
}
