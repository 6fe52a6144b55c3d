package bus

import "time"

// roomWaiter is a Block producer in line for room in the ring (Bus.line).
type roomWaiter struct {
	turn chan struct{} // buffered 1: a token when it reaches the front, and at Close
}

// awaitTurn makes a producer that is not at the front of the line for room
// wait its turn. A producer that finds others in line joins it behind them
// unless the ring, at tail t and head h, has room for its entry (total
// bytes) beyond what theirs need: the room freed is theirs first, and a
// line of producers that log without pause dissolves once room is back.
// An output logging through its own handler never joins (it would wait
// for its own call to return). It reports whether the caller must load
// the cursors again before reserving.
func (b *Bus) awaitTurn(w *waitState, t, h, total uint64) (bool, error) {
	if w.me == nil {
		line := b.lineBytes.Load() // atomic, row lineBytes: non-zero is a waiter really in line
		if line == 0 || t+total-h+line <= b.capacity || !b.join(w) {
			return false, nil
		}
	}
	if w.front {
		return false, nil
	}
	return true, b.waitTurn(w, t)
}

// join puts the producer at the end of the line for room (its
// BlockTimeout starts) and reports true, unless it logs from inside a
// call into the output (bypass: its room is freed only once its own call
// returns, so it never waits).
func (b *Bus) join(w *waitState) bool {
	if w.bypass || b.inOutputCall() {
		w.bypass = true
		return false
	}
	if b.blockTimeout > 0 && w.deadline.IsZero() {
		w.deadline = time.Now().Add(b.blockTimeout)
	}
	w.me = &roomWaiter{turn: make(chan struct{}, 1)}
	b.mu.Lock()
	b.line = append(b.line, w.me)
	w.front = len(b.line) == 1
	// Stored under mu, after the append: a newcomer that loads a
	// non-zero sum queues behind a waiter that is really there.
	b.lineBytes.Store(b.lineBytes.Load() + w.need) // atomic, row lineBytes: written under mu only
	b.mu.Unlock()
	return true
}

// waitTurn waits until the producer is at the front of the line (its
// token) or Close (every waiter gets a token). It drops the record
// (ErrDropped) at its BlockTimeout, when its done channel closes, and when
// the output is stuck (the room wait's rule, see waitForRoom), which it
// looks for every StuckAfter/4 (roomStep).
func (b *Bus) waitTurn(w *waitState, t uint64) error {
	tm := time.NewTimer(b.roomStep(w))
	defer tm.Stop()
	for {
		select {
		case <-w.me.turn:
			b.mu.Lock()
			w.front = b.line[0] == w.me // w.me is in line until leaveLine
			b.mu.Unlock()
			return nil
		case <-tm.C:
			if b.roomGivesUp(w) {
				b.leaveLine(w)
				return b.drop(t)
			}
			tm.Reset(b.roomStep(w))
		case <-w.done:
			b.leaveLine(w)
			b.kick()
			return b.drop(t)
		}
	}
}

// roomStep is how long a producer waiting for room waits before it looks
// again for a stuck output or its BlockTimeout.
func (b *Bus) roomStep(w *waitState) time.Duration {
	step := StuckAfter / 4
	if !w.deadline.IsZero() {
		step = max(min(step, time.Until(w.deadline)), time.Microsecond)
	}
	return step
}

// roomGivesUp reports whether a producer waiting for room drops its
// record: its BlockTimeout passed, or the output is stuck (room would come
// back only when the call returns, maybe never) and was at its previous
// look too, in the same call: a drop loses a record, so a moment that
// only looks stuck (a stop of the world, a thread the machine starved)
// must last. While the output moves, however slowly, it waits on.
func (b *Bus) roomGivesUp(w *waitState) bool {
	if !w.deadline.IsZero() && !time.Now().Before(w.deadline) {
		return true
	}
	call := b.stuckCall(0)
	seen := w.stuckCall
	w.stuckCall = call
	return call != 0 && call == seen
}

// leaveLine takes the producer out of the line, if it is in it, and hands
// the front's turn to the next one.
func (b *Bus) leaveLine(w *waitState) {
	if w.me == nil {
		return
	}
	b.mu.Lock()
	for i, r := range b.line {
		if r != w.me {
			continue
		}
		copy(b.line[i:], b.line[i+1:])
		b.line[len(b.line)-1] = nil
		b.line = b.line[:len(b.line)-1]
		b.lineBytes.Store(b.lineBytes.Load() - w.need) // atomic, row lineBytes: written under mu only; r is w.me, added with w.need
		if i == 0 && len(b.line) > 0 {
			select {
			case b.line[0].turn <- struct{}{}: // buffered 1: the new front's turn
			default: // it has a token already (Close's)
			}
		}
		break
	}
	b.mu.Unlock()
	w.me, w.front = nil, false
}

// wakeLine gives every producer in line a token (Close): each then sees
// the closed tail and leaves.
func (b *Bus) wakeLine() {
	b.mu.Lock()
	for _, r := range b.line {
		select {
		case r.turn <- struct{}{}:
		default: // it has one already
		}
	}
	b.mu.Unlock()
}
