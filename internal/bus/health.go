package bus

// outputHealth is the drainer's view of the output, which decides whether a
// batch is written, held, failed fast or probed (see drainer.admit).
type outputHealth uint8

const (
	// healthy: batches are written as they come, with WriteAttempts each.
	healthy outputHealth = iota
	// failing: a batch spent its attempts; later batches fail at once,
	// without a call, or wait in the ring (holdForProbe) until probeAt.
	failing
	// probing: the back-off has passed, or a Flush or Close wants the
	// write now; the next batch gets one attempt.
	probing
	// torn: the output works, but a batch was given up part-way through a
	// record that could not be cut back; the newline that ends its
	// fragment (drainer.owed) goes out before anything else.
	torn
)

// healthEvent is what the drainer learns from a call into the output.
type healthEvent uint8

const (
	evProgress healthEvent = iota // a call took something
	evGiveUp                      // a batch spent its attempts, or a probe took nothing
	evProbeDue                    // the back-off has passed, or a caller waits for the write
	evTear                        // a batch was given up with a fragment that could not be cut back
	evMended                      // the bytes owed after a fragment are out
)

func (h outputHealth) String() string {
	return [...]string{"healthy", "failing", "probing", "torn"}[h]
}

// next is the transition on e. A fragment left while failing is mended by
// the probe, whose first bytes are the owed ones (admit), so a failing
// output stays failing on evTear and becomes healthy on progress.
func (h outputHealth) next(e healthEvent) outputHealth {
	switch e {
	case evGiveUp:
		return failing
	case evProbeDue:
		if h == failing {
			return probing
		}
	case evProgress:
		if h != torn {
			return healthy
		}
	case evTear:
		if h != failing {
			return torn
		}
	case evMended:
		if h == torn {
			return healthy
		}
	}
	return h
}

// on moves the output's health on e.
func (d *drainer) on(e healthEvent) {
	d.health = d.health.next(e)
	if e == evProgress {
		d.setFailing(false)
	}
}

// setFailing publishes whether the drainer's last call into the output
// failed (retrying or failing), for callers' waits (outputWatch.failing):
// stored only on a change.
func (d *drainer) setFailing(f bool) {
	if d.failing != f {
		d.failing = f
		d.b.failing.Store(f) // atomic, row failing: a stale value only skips or makes one bounded wait
	}
}
