package bus

import (
	"fmt"
	"math"
	"slices"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// drop counts a record refused at tail position t and registers the gap at t.
// Each distinct gap position gets its own marker, so a reader sees the gap
// exactly where it is: every record a producer had accepted before the drop
// lies below t, every record it accepts afterwards at or above t. This runs
// only when the ring is full, so a short critical section is acceptable here.
func (b *Bus) drop(t uint64) error {
	b.dropMu.Lock()
	if b.gapsFinal {
		// Close has finished draining while this producer waited: the
		// output is complete, so this is a record refused after Close.
		b.dropMu.Unlock()
		return b.dropClosed()
	}
	b.dropped.Add(1) // atomic, row dropped
	i := len(b.gaps)
	for i > 0 && b.gaps[i-1].pos > t { // nearly always appends or hits the last gap
		i--
	}
	if i > 0 && b.gaps[i-1].pos == t {
		b.gaps[i-1].n++
	} else {
		b.gaps = slices.Insert(b.gaps, i, gap{pos: t, n: 1})
	}
	// Atomic store under the lock: the drainer checks the lowest gap with one
	// load per entry and takes the lock only when it has reached it.
	b.gapPos.Store(b.gaps[0].pos) // atomic, row gapPos
	b.dropMu.Unlock()
	return ErrDropped
}

// takeGaps removes the gaps at or below pos and returns their drop count.
// final marks the last call, after which no gap is accepted (see gapsFinal).
func (b *Bus) takeGaps(pos uint64, final bool) uint64 {
	b.dropMu.Lock()
	defer b.dropMu.Unlock()
	b.gapsFinal = b.gapsFinal || final
	var n uint64
	i := 0
	for ; i < len(b.gaps) && b.gaps[i].pos <= pos; i++ {
		n += b.gaps[i].n
	}
	b.gaps = slices.Delete(b.gaps, 0, i)
	next := uint64(math.MaxUint64)
	if len(b.gaps) > 0 {
		next = b.gaps[0].pos
	}
	b.gapPos.Store(next) // atomic, row gapPos
	return n
}

type gap struct{ pos, n uint64 }

func (d *drainer) addMarker(n uint64) {
	d.marker = d.formatMarker(n)
	view := d.marker
	if d.b.seq.On() { // the marker accounts for the n lost numbers
		d.seqMarker = d.b.seq.Marker(d.seqMarker, d.marker, n)
		d.seqMarkN = n
		if len(d.marker) > 0 {
			view = d.seqMarker
		}
	}
	d.views = append(d.views, view)
	d.kinds = append(d.kinds, kMarker)
}

// formatMarker runs the DropMarker hook. A hook that panics or returns
// nothing must not kill the drainer or hide the gap: no line is written and
// OnError is told how many records were lost here.
func (d *drainer) formatMarker(n uint64) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			d.report("mark", fmt.Errorf("%s dropped here; the drop marker panicked: %v", plural.Count(n, "record", "records"), r))
			out = d.marker[:0]
		}
	}()
	out = d.b.dropMarker(d.marker[:0], n)
	if len(out) == 0 {
		d.report("mark", fmt.Errorf("%s dropped here; the drop marker is empty", plural.Count(n, "record", "records")))
	}
	return out
}
