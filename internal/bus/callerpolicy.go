package bus

import (
	"math"
	"time"
)

// callerAction is what a log call does about the output for its record.
type callerAction uint8

const (
	// callerReturn returns at once: the record is queued (or, from a
	// reservation that found the ring empty, committed to it as usual).
	callerReturn callerAction = iota
	// callerWriteThrough writes the record to the output on the caller's
	// goroutine (tryWriteThrough).
	callerWriteThrough
	// callerWaitQuiet waits, at most QuietWaitMax, for the drainer to
	// write the record (the quiet wait).
	callerWaitQuiet
	// callerWaitWritten waits, at most ErrorWaitMax, for the record's
	// write (an Error record), or, for an oversize record of a durable
	// ring, as for room (Config.BlockTimeout).
	callerWaitWritten
	// callerWaitSynced waits, at most SyncWaitMax, for everything queued
	// to be written and synced (the root's SyncLevel records).
	callerWaitSynced
	// callerWaitRoom waits in line for room in the ring (Block), at most
	// Config.BlockTimeout or until the caller's done channel closes.
	callerWaitRoom
	// callerSpinRoom waits for room without taking a place in line and
	// without parking: a few re-checks and yields, then the record is
	// dropped. For a caller inside a call into the output, whose room is
	// freed only after that call returns.
	callerSpinRoom
	// callerDrop drops the record at once (counted, ErrDropped).
	callerDrop
)

func (a callerAction) String() string {
	return [...]string{"return", "write through", "wait quietly", "wait for the write",
		"wait for the sync", "wait for room", "spin for room", "drop"}[a]
}

// queueState is what a caller's record found in the ring.
type queueState uint8

const (
	// queueEmpty: the record's reservation found everything ahead of it in
	// the output, and needs no wrap padding; it is not committed yet.
	queueEmpty queueState = iota
	// queueBehind: the record is committed, callerInputs.ahead bytes of
	// unwritten entries ahead of it.
	queueBehind
	// queueFull: no room for the record.
	queueFull
)

func (s queueState) String() string { return [...]string{"empty", "queued", "full"}[s] }

// callerFact is one yes-or-no input of the caller policy, a bit of
// callerInputs.facts. Each output-health fact (reentrant, busy,
// orderAhead, backlogged) is set when the output is less healthy: the
// zero value is the healthiest (see callerActionFor).
type callerFact uint16

const (
	// The configuration.
	factDrop    callerFact = 1 << iota // Overflow is Drop
	factRemote                         // the output retries over a network: callers never write to it nor wait for it
	factTouch                          // callers may write to or wait quietly for the output: CallersMayTouch's answer, in Config.WriteThrough
	factDirect                         // the output is a file, a pipe or io.Discard: its writes cannot block for long
	factDurable                        // the ring lives in a file (Config.RingFile)

	// The call.
	factWritten     // the record must be written before the call returns (the root's Error records)
	factSynced      // the record must be written and synced before the call returns (the root's SyncLevel records)
	factCancellable // a done channel or context can end the call's waits
	factCancelled   // that channel is closed already
	factOversize    // the record lives on the heap (longer than maxRecord)

	// The output's health.
	factReentrant  // the caller is inside a call into the output (an output logging through its handler)
	factBusy       // a call into the output is in flight or ended within QuietAfter (not quiet)
	factOrderAhead // a drop marker, owed bytes or the drainer's own call must reach the output first
	factBacklogged // at its measured rate the output cannot write ahead and the record within ErrorWaitMax
)

// callerInputs is everything the caller policy reads, in 16 bytes so that
// asking costs a log call next to nothing.
type callerInputs struct {
	facts callerFact
	speed uint8      // the breaker's verdict: speedFast, speedSlow, speedStuck
	queue queueState // what the record found in the ring
	ahead uint64     // queueBehind: bytes of unwritten entries ahead of the record
}

// has reports whether every fact in f is set.
func (in callerInputs) has(f callerFact) bool { return in.facts&f == f }

// any reports whether one of the facts in f is set.
func (in callerInputs) any(f callerFact) bool { return in.facts&f != 0 }

// callerActionFor is the one answer to "may this log call touch or wait
// for the output, and how?".
//
// It is monotonic in the output's health: with a slower speed, or
// factReentrant, factBusy, factOrderAhead or factBacklogged set, it never
// answers a write or a wait where the healthier inputs answer
// callerReturn (TestCallerActionMonotonic). Callers rely on that to ask
// first with the healthy zero values, which cost no load of the breaker's
// words, and to gather the output's health only when that answer is not
// callerReturn (Bus.callerAction).
func callerActionFor(in callerInputs) callerAction {
	switch {
	case in.queue == queueFull:
		return roomAction(in)
	case in.has(factRemote):
		return callerReturn
	case in.queue == queueEmpty:
		// Write-through: only a record that would otherwise sit alone in
		// the ring, into an output that cannot keep the caller long.
		if in.has(factTouch|factDirect) && !in.any(factCancellable|factOversize|factOrderAhead) &&
			in.speed == speedFast && (in.has(factWritten) || !in.has(factBusy)) {
			return callerWriteThrough
		}
		return callerReturn // committed; asked again as queueBehind
	}
	switch {
	case in.has(factSynced):
		if in.speed <= speedSlow && !in.has(factReentrant) {
			return callerWaitSynced
		}
	case in.has(factWritten):
		if in.speed <= speedSlow && !in.any(factReentrant|factBacklogged) {
			return callerWaitWritten
		}
	case in.has(factOversize):
		// A durable ring does not hold oversize records: only the output
		// keeps one across a crash, so it is back-pressure, as a full ring.
		if in.has(factDurable) && !in.any(factDrop|factCancellable|factReentrant) {
			return callerWaitWritten
		}
	case in.has(factTouch) && !in.any(factCancellable|factReentrant) && in.ahead <= QuietWaitDepth && in.speed == speedFast:
		return callerWaitQuiet
	}
	return callerReturn
}

// roomAction is callerActionFor for a full ring.
func roomAction(in callerInputs) callerAction {
	switch {
	case in.any(factDrop | factCancelled):
		return callerDrop
	case in.has(factReentrant):
		return callerSpinRoom
	}
	return callerWaitRoom
}

// callersMayTouch reports whether callers may write to or wait quietly for
// an output, for a bus in mode overflow, with a BlockTimeout or not, whose
// output retries over a network (remote) or not: only in Block mode
// without BlockTimeout (Drop mode and a BlockTimeout promise callers a
// bounded wait, which a stuck output, a full pipe, would break), never for
// a remote output (a log call must not wait for a collector's round trips
// and back-off).
func callersMayTouch(overflow Overflow, blockTimeout time.Duration, remote bool) bool {
	return overflow == Block && blockTimeout == 0 && !remote
}

// configFacts are the facts of a configuration: mode overflow, with a
// BlockTimeout or not, an output of unknown kind or not (direct), remote
// or not, a durable ring or not.
func configFacts(overflow Overflow, blockTimeout time.Duration, direct, remote, durable bool) callerFact {
	var f callerFact
	if overflow == Drop {
		f |= factDrop
	}
	if callersMayTouch(overflow, blockTimeout, remote) && !durable {
		f |= factTouch
	}
	if direct {
		f |= factDirect
	}
	if remote {
		f |= factRemote
	}
	if durable {
		f |= factDurable
	}
	return f
}

// runtimeFacts are the facts of a running bus: its mode, and what New
// made of Config.WriteThrough (touch), the output's kind (direct) and
// Config.RingFile (durable).
func runtimeFacts(overflow Overflow, touch, direct, durable bool) callerFact {
	f := configFacts(overflow, 0, direct, false, durable) &^ factTouch
	if touch {
		f |= factTouch
	}
	return f
}

// CallersMayTouch is the caller policy's answer for a configuration: true
// when records may be written through on the caller's goroutine and wait
// quietly for their write (the value for Config.WriteThrough).
func CallersMayTouch(overflow Overflow, blockTimeout time.Duration, remote bool) bool {
	in := callerInputs{facts: configFacts(overflow, blockTimeout, true, remote, false), queue: queueEmpty}
	return callerActionFor(in) == callerWriteThrough
}

// ErrorsWait is the caller policy's answer for an output: true when
// records that must be written before their call returns (the root's
// Error records, EnqueueWritten) wait for their write, in every mode;
// false for a remote output, which callers never wait on.
func ErrorsWait(remote bool) bool {
	in := callerInputs{facts: configFacts(Block, 0, false, remote, false) | factWritten, queue: queueBehind}
	return callerActionFor(in) == callerWaitWritten
}

// mayAct reports whether the caller policy may answer anything but
// callerReturn for an ordinary record (not one that must be written or
// synced) committed behind ahead bytes: only when callers may touch the
// output and the queue ahead is short, or for an oversize record of a
// durable ring. The busy path asks it instead of the policy: one load of a
// read-only field and two comparisons (TestCallerPolicyMayAct checks it
// against callerActionFor).
func (b *Bus) mayAct(ahead uint64) bool {
	return (b.facts&factTouch != 0 && ahead <= QuietWaitDepth) || (ahead == math.MaxUint64 && b.facts&factDurable != 0)
}

// callerAction asks the caller policy about a committed record (in.queue
// queueBehind) of n bytes: first with the output's health at its
// healthiest, the zero values, which costs no load of the breaker's
// words; then with the breaker's speed and the output's
// backlog; last with whether the caller is inside a call into the output
// (a stack walk while a call is in flight). Each early answer is final
// because the policy is monotonic in the output's health.
func (b *Bus) callerAction(in callerInputs, n uint64) callerAction {
	if callerActionFor(in) == callerReturn {
		return callerReturn
	}
	in.speed = uint8(b.outputSpeed())
	if in.has(factWritten) && !in.has(factOversize) && !b.writableWithin(in.ahead+n, ErrorWaitMax) {
		in.facts |= factBacklogged
	}
	if callerActionFor(in) == callerReturn {
		return callerReturn
	}
	if b.inOutputCall() {
		in.facts |= factReentrant
	}
	return callerActionFor(in)
}
