package bus

import "time"

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

// callerInputs is everything the caller policy reads. The zero value of
// each output-health field is the healthiest (fast, not inside a call,
// quiet, nothing ahead to keep order behind): see callerActionFor.
type callerInputs struct {
	// The configuration.
	overflow Overflow
	remote   bool // the output retries over a network: callers never write to it nor wait for it
	touch    bool // callers may write to or wait quietly for the output: callersMayTouch's answer, in Config.WriteThrough
	direct   bool // the output is a file, a pipe or io.Discard: its writes cannot block for long
	durable  bool // the ring lives in a file (Config.RingFile)

	// The call.
	written     bool // the record must be written before the call returns (the root's Error records)
	synced      bool // the record must be written and synced before the call returns (the root's SyncLevel records)
	cancellable bool // a done channel or context can end the call's waits
	cancelled   bool // that channel is closed already
	oversize    bool // the record lives on the heap (longer than maxRecord)

	// The output's health.
	speed      uint32 // the breaker's verdict: speedFast, speedSlow, speedStuck
	reentrant  bool   // the caller is inside a call into the output (an output logging through its handler)
	busy       bool   // a call into the output is in flight or ended within QuietAfter (not quiet)
	orderAhead bool   // a drop marker, owed bytes or the drainer's own call must reach the output first
	backlogged bool   // at its measured rate the output cannot write ahead and the record within ErrorWaitMax

	// The ring.
	queue queueState
	ahead uint64 // queueBehind: bytes of unwritten entries ahead of the record
}

// callerActionFor is the one answer to "may this log call touch or wait
// for the output, and how?".
//
// It is monotonic in the output's health: with a slower speed, or
// reentrant, busy, orderAhead or backlogged set, it never answers a write
// or a wait where the healthier inputs answer callerReturn
// (TestCallerActionMonotonic). Callers rely on that to ask first with the
// healthy zero values, which cost no load of the breaker's words, and to
// gather the output's health only when that answer is not callerReturn
// (Bus.callerAction).
func callerActionFor(in callerInputs) callerAction {
	switch {
	case in.queue == queueFull:
		return roomAction(in)
	case in.remote:
		return callerReturn
	case in.queue == queueEmpty:
		// Write-through: only a record that would otherwise sit alone in
		// the ring, into an output that cannot keep the caller long.
		if in.touch && in.direct && !in.cancellable && !in.oversize && !in.orderAhead &&
			in.speed == speedFast && (in.written || !in.busy) {
			return callerWriteThrough
		}
		return callerReturn // committed; asked again as queueBehind
	}
	switch {
	case in.synced:
		if in.speed <= speedSlow && !in.reentrant {
			return callerWaitSynced
		}
	case in.written:
		if in.speed <= speedSlow && !in.reentrant && !in.backlogged {
			return callerWaitWritten
		}
	case in.oversize:
		// A durable ring does not hold oversize records: only the output
		// keeps one across a crash, so it is back-pressure, as a full ring.
		if in.durable && in.overflow == Block && !in.cancellable && !in.reentrant {
			return callerWaitWritten
		}
	case in.touch && !in.cancellable && in.ahead <= QuietWaitDepth && in.speed == speedFast && !in.reentrant:
		return callerWaitQuiet
	}
	return callerReturn
}

// roomAction is callerActionFor for a full ring.
func roomAction(in callerInputs) callerAction {
	switch {
	case in.overflow == Drop, in.cancelled:
		return callerDrop
	case in.reentrant:
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

// CallersMayTouch is the caller policy's answer for a configuration: true
// when records may be written through on the caller's goroutine and wait
// quietly for their write (the value for Config.WriteThrough).
func CallersMayTouch(overflow Overflow, blockTimeout time.Duration, remote bool) bool {
	return callerActionFor(callerInputs{
		overflow: overflow,
		remote:   remote,
		touch:    callersMayTouch(overflow, blockTimeout, remote),
		direct:   true,
		queue:    queueEmpty,
	}) == callerWriteThrough
}

// ErrorsWait is the caller policy's answer for an output: true when
// records that must be written before their call returns (the root's
// Error records, EnqueueWritten) wait for their write, in every mode;
// false for a remote output, which callers never wait on.
func ErrorsWait(remote bool) bool {
	return callerActionFor(callerInputs{remote: remote, written: true, queue: queueBehind}) == callerWaitWritten
}

// callerAction asks the caller policy about a committed record (in.queue
// queueBehind) of n bytes: first with the output's health at its
// healthiest, the zero values, which answers callerReturn on the busy
// path at no cost; then with the breaker's speed and the output's
// backlog; last with whether the caller is inside a call into the output
// (a stack walk while a call is in flight). Each early answer is final
// because the policy is monotonic in the output's health.
func (b *Bus) callerAction(in callerInputs, n uint64) callerAction {
	act := callerActionFor(in)
	if act == callerReturn {
		return act
	}
	in.speed = b.outputSpeed()
	in.backlogged = in.written && !in.oversize && !b.writableWithin(in.ahead+n, ErrorWaitMax)
	if act = callerActionFor(in); act == callerReturn {
		return act
	}
	in.reentrant = b.inOutputCall()
	return callerActionFor(in)
}
