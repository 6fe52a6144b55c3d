package bus

// batchAction is what the drainer does with the batch it has collected.
type batchAction uint8

const (
	// actWrite writes the batch, with the batch's retry budget.
	actWrite batchAction = iota
	// actGather waits (at most gatherFor) for more records, then decides
	// again: light load makes few, larger writes.
	actGather
	// actHold keeps the batch in the ring and sleeps until the probe is
	// due: records of a short outage are written by the probe, not failed.
	actHold
	// actProbe makes one attempt at a failing output: the back-off has
	// passed, or a Flush or Close waits for the write.
	actProbe
	// actFailFast counts the batch as failed without a call: the output
	// is failing, the probe is not due, and the ring's space is needed
	// (past the wake backlog, a Block caller waiting, or woken for it); or
	// a Close gave up.
	actFailFast
)

func (a batchAction) String() string {
	return [...]string{"write", "gather", "hold", "probe", "fail fast"}[a]
}

// batchInputs is everything the decision reads.
type batchInputs struct {
	down          bool // the output is down (drainer.down)
	probeDue      bool // the back-off since the last failure has passed
	urgent        bool // a Flush, Sync, EnqueueWritten or Close waits for the write
	woken         bool // a hold was cut short: the batch is wanted now
	pastWatermark bool // the ring holds more than the wake backlog
	blocked       bool // a Block caller waits for room
	small         bool // fewer than minBatch records, and nothing more committed (drainer.small)
	gather        bool // after an idle sleep or a small round (and no gather yet)
	aborted       bool // a Close gave up
}

// batchActionFor is the one answer to "why is this batch (not) written now?".
func batchActionFor(in batchInputs) batchAction {
	switch {
	case in.aborted:
		return actFailFast
	case in.gather && in.small && !in.urgent && !in.pastWatermark:
		return actGather
	case !in.down:
		return actWrite // the owed bytes of a torn record go first: admit
	case in.probeDue || in.urgent:
		return actProbe
	case in.woken || in.pastWatermark || in.blocked:
		return actFailFast
	}
	return actHold
}

// batchAction gathers the inputs for the batch in hand; t is the tail loaded at
// the top of the round.
func (d *drainer) batchAction(urgent bool, t uint64) batchAction {
	b := d.b
	return batchActionFor(batchInputs{
		down:          d.down,
		probeDue:      d.down && !d.now().Before(d.probeAt),
		urgent:        urgent,
		woken:         d.woken,
		pastWatermark: (t&^closedBit)-d.head >= b.wakeBytes,
		blocked:       b.waiters.Load() > 0, // atomic, row waiters: Block callers parked in waitForRoom
		small:         d.small(),
		gather:        d.gather,
		aborted:       b.aborted.Load(), // atomic, row aborted: set by giveUp
	})
}

// hold sleeps until the probe is due (actHold). Anything that wakes it (a
// producer past the wake backlog, a full ring, Flush, Close) makes the batch
// wanted now: failed fast, or probed.
func (d *drainer) hold() {
	// Sleeping state: producers wake us past the wake backlog, kick always.
	if d.idleWait(stSleeping, d.probeAt.Sub(d.now()), d.readyWanted) != waitTimedOut {
		d.woken = true
	}
}
