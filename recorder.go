package asyncbus

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asyncbus/asyncbus/encode"
)

// FlightRecorder configures Options.Features.FlightRecorder: records below the
// handler's level but at or above Level are encoded as usual and kept in a
// bounded ring in memory instead of being written; a record at or above
// Trigger writes the kept records first, in order, between two marker lines,
// then itself.
//
// The kept records and the trigger record go to the output as one entry, so
// no other record lands between them. Kept records that are never triggered
// are not written: they age out (MaxAge) or are pushed out by newer ones
// (Size), which costs nothing more; Close ends the recorder, and what it
// still keeps counts as expired (Stats says what became of each kept
// record). Each handler tree (a NewHandler and every
// handler derived from it) has one recorder. Records refused by the Sampler
// are not kept; kept records pass through ReplaceAttr, the Context hook and
// the stack trace like written ones. The ring lives in the heap, even with
// Options.Ring.File: kept records are lost at exit and in a crash (only what
// a trigger wrote is in the durable ring). Not available with an output's
// own Encoder (OpenWithEncoder: otlpsink, journald).
type FlightRecorder struct {
	// Level is the lowest level kept; nil means LevelDebug. Records at or
	// above the handler's own level (for their logger, with Rules) are
	// written, not kept.
	Level slog.Leveler
	// Trigger is the level at or above which a written record writes the
	// kept records first; nil means slog.LevelError.
	Trigger slog.Leveler
	// Size bounds the memory the kept records take, in bytes, 32 bytes of
	// bookkeeping each included; zero means 1 MiB. A record larger than
	// Size is not kept (counted in Stats.RecorderExpired).
	Size int
	// MaxAge is how long a record stays eligible; zero means one minute.
	MaxAge time.Duration
	// Group, when set, names the request a context belongs to
	// (otelbridge.TraceGroup gives the trace id). A trigger record whose
	// context has a group writes only the kept records of the same group,
	// so one failing request brings its own records and nobody else's; one
	// whose context has none writes every kept record. Nil: no groups.
	Group func(ctx context.Context) (id [16]byte, ok bool)
}

// Defaults of FlightRecorder.
const (
	defaultRecorderSize   = 1 << 20
	defaultRecorderMaxAge = time.Minute
	maxRecorderSize       = 1 << 30
)

// recorder is one handler tree's flight recorder: a ring of variable-size
// entries in buf, each an entryHeader-byte header and the encoded record,
// 8-byte aligned, wrapping with a padding entry. Everything but the
// counters is guarded by mu: keeping a record is a short copy under the
// lock, and the debug-level paths it serves are not the hot path the bus
// is built for.
type recorder struct {
	level, trigger slog.Leveler
	maxAge         time.Duration
	group          func(context.Context) (id [16]byte, ok bool)
	marker         *encode.Encoder // the root handler's: markers carry no WithAttrs state

	mu         sync.Mutex
	buf        []byte
	head, tail uint64 // positions of the oldest entry and the next free byte; [head, tail) is in use
	closed     bool   // set by close: nothing is kept any more

	// Counters read by Stats without mu; each is only added to.
	kept, written, expired, lost atomic.Uint64
}

// Entry layout: length (uint32), flags (uint32), time (int64 unix nanos),
// group id (16 bytes), then the record. A padding entry is its first 8
// bytes only, so it fits any gap left at the end of buf.
const (
	entryHeader = 32
	flagPad     = 1 << 0 // the rest of buf up to the wrap is unused
	flagDone    = 1 << 1 // written or expired: skip it
	flagGroup   = 1 << 2 // the id is set
)

// newRecorder returns the recorder for fr, or nil when fr is nil.
func newRecorder(fr *FlightRecorder, marker *encode.Encoder) *recorder {
	if fr == nil {
		return nil
	}
	r := &recorder{level: fr.Level, trigger: fr.Trigger, maxAge: fr.MaxAge, group: fr.Group, marker: marker}
	if r.level == nil {
		r.level = slog.LevelDebug
	}
	if r.trigger == nil {
		r.trigger = slog.LevelError
	}
	if r.maxAge <= 0 {
		r.maxAge = defaultRecorderMaxAge
	}
	size := fr.Size
	if size <= 0 {
		size = defaultRecorderSize
	}
	r.buf = make([]byte, (size+7)&^7)
	return r
}

// keeps reports whether records at l are kept (below the handler's level).
func (r *recorder) keeps(l slog.Level) bool { return l >= levelNow(r.level) }

// triggers reports whether a written record at l writes the kept records.
func (r *recorder) triggers(l slog.Level) bool { return l >= levelNow(r.trigger) }

// groupOf returns ctx's group id, if the recorder has groups and ctx one.
func (r *recorder) groupOf(ctx context.Context) (id [16]byte, ok bool) {
	if r.group == nil || ctx == nil {
		return id, false
	}
	return r.group(ctx)
}

// Outcomes of recorder.add.
const (
	addKept    = iota
	addTooBig  // larger than the ring: not kept, counted as expired
	addRefused // the handler closed: not kept, not counted
)

// add keeps a copy of rec, logged at t, and says what became of it.
func (r *recorder) add(rec []byte, t time.Time, id [16]byte, grouped bool) int {
	size := uint64(len(r.buf))
	need := align8(entryHeader + uint64(len(rec)))
	var flags uint32
	if grouped {
		flags = flagGroup
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return addRefused
	case need > size:
		r.mu.Unlock()
		r.expired.Add(1)
		return addTooBig
	}
	off := r.tail % size
	switch gap := size - off; {
	case gap >= need:
		r.makeRoom(need)
	case gap+need <= size: // wrap: pad the gap, start again at 0
		r.makeRoom(gap + need)
		binary.LittleEndian.PutUint64(r.buf[off:], uint64(flagPad)<<32)
		r.tail += gap
		off = 0
	default: // the gap and the record do not fit together: empty the ring, start the next lap
		r.makeRoom(size)
		r.tail += gap
		r.head = r.tail
		off = 0
	}
	e := r.buf[off : off+need]
	binary.LittleEndian.PutUint32(e[0:], uint32(len(rec)))
	binary.LittleEndian.PutUint32(e[4:], flags)
	binary.LittleEndian.PutUint64(e[8:], uint64(t.UnixNano()))
	copy(e[16:32], id[:])
	copy(e[entryHeader:], rec)
	r.tail += need
	r.mu.Unlock()
	r.kept.Add(1)
	return addKept
}

// close ends the recorder (nil: none) when its handler closes: the records
// it still keeps will never be written and count as expired, and nothing is
// kept any more. It is idempotent.
func (r *recorder) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for r.head < r.tail {
		r.head += r.skip(r.head, true)
	}
}

// makeRoom removes the oldest entries until n more bytes fit (n ≤ the
// ring's size), with mu held. An entry removed before it was written counts
// as expired.
func (r *recorder) makeRoom(n uint64) {
	size := uint64(len(r.buf))
	for r.head < r.tail && r.tail+n-r.head > size {
		r.head += r.skip(r.head, true)
	}
}

// skip returns the size of the entry at position p, with mu held; when
// evict is set, an entry not yet written or expired is counted as expired.
func (r *recorder) skip(p uint64, evict bool) uint64 {
	size := uint64(len(r.buf))
	off := p % size
	n := binary.LittleEndian.Uint32(r.buf[off:])
	flags := binary.LittleEndian.Uint32(r.buf[off+4:])
	if flags&flagPad != 0 {
		return size - off
	}
	if evict && flags&flagDone == 0 {
		r.expired.Add(1)
	}
	return align8(entryHeader + uint64(n))
}

// appendKept appends to dst, in order, the kept records eligible at now for
// a trigger of group id (every group when grouped is false), marks them
// taken, and returns dst with how many it appended and the times of the
// first and last; the trigger's caller counts them (settle). Records older
// than MaxAge are marked and counted as expired.
func (r *recorder) appendKept(dst []byte, now time.Time, id [16]byte, grouped bool) ([]byte, int, time.Time, time.Time) {
	size := uint64(len(r.buf))
	cutoff := now.Add(-r.maxAge).UnixNano()
	var n int
	var first, last int64
	r.mu.Lock()
	for p := r.head; p < r.tail; {
		off := p % size
		adv := r.skip(p, false)
		flags := binary.LittleEndian.Uint32(r.buf[off+4:])
		if flags&(flagPad|flagDone) == 0 {
			e := r.buf[off:]
			at := int64(binary.LittleEndian.Uint64(e[8:]))
			switch {
			case at < cutoff:
				flags |= flagDone
				r.expired.Add(1)
			case !grouped || (flags&flagGroup != 0 && [16]byte(e[16:32]) == id):
				flags |= flagDone
				rec := e[entryHeader : entryHeader+uint64(binary.LittleEndian.Uint32(e))]
				dst = append(dst, rec...)
				if n == 0 {
					first = at
				}
				last, n = at, n+1
			}
			binary.LittleEndian.PutUint32(e[4:], flags)
		}
		p += adv
	}
	for r.head < r.tail { // drop the written, expired and padding entries at the front
		off := r.head % size
		if binary.LittleEndian.Uint32(r.buf[off+4:])&(flagPad|flagDone) == 0 {
			break
		}
		r.head += r.skip(r.head, false)
	}
	r.mu.Unlock()
	return dst, n, time.Unix(0, first), time.Unix(0, last)
}

// settle counts the n kept records a trigger took, once the trigger's
// Handle knows its fate: written with it, or lost when the ring refused it
// (full in Drop mode or past a BlockTimeout, or closed).
func (r *recorder) settle(n int, err error) {
	if n == 0 {
		return
	}
	if errors.Is(err, ErrDropped) || errors.Is(err, ErrClosed) {
		r.lost.Add(uint64(n))
		return
	}
	r.written.Add(uint64(n))
}

// keep is the flight recorder's keep stage: it encodes r (with attrs, as
// the encode stage takes them) as a written record is encoded and keeps it.
// It reports false when the recorder is closed: the record then goes the
// way of a written one, which the closed ring refuses and counts.
func (h *Handler) keep(ctx context.Context, r *slog.Record, attrs []slog.Attr) bool {
	rc := h.tree.recorder
	b := h.encode(ctx, r, attrs)
	id, grouped := rc.groupOf(ctx)
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	res := rc.add(b.data[b.room:], t, id, grouped) // without the number's headroom (sequence.go)
	if res == addKept {
		h.tree.logged.add(r.Level, b) // levelcounts.go: counted as kept
	}
	b.release()
	return res != addRefused
}

// withKept returns b, or, when the recorder holds records for ctx's group,
// a buffer holding them between two marker lines followed by b's record (b
// is then released), so that they reach the output as one entry; n is how
// many kept records it holds, for recorder.settle.
func (h *Handler) withKept(ctx context.Context, rc *recorder, b *buffer) (out *buffer, n int) {
	id, grouped := rc.groupOf(ctx)
	now := time.Now()
	kb := bufPool.Get().(*buffer)
	kept, n, first, last := rc.appendKept(kb.data[:0], now, id, grouped)
	kb.data = kept
	if n == 0 {
		kb.release()
		return b, 0
	}
	out = bufPool.Get().(*buffer)
	out.data = rc.marker.Append(out.data[:0], recorderMarker(now, "asyncbus: flight recorder: records kept before the next one",
		slog.Int("records", n), slog.Time("first", first), slog.String("span", last.Sub(first).String())), nil)
	out.data = append(out.data, kept...)
	out.data = rc.marker.Append(out.data, recorderMarker(now, "asyncbus: flight recorder: end", slog.Int("records", n)), nil)
	out.data = append(out.data, b.data[b.room:]...) // the entry gets one headroom, in enqueue
	kb.release()
	b.release()
	return out, n
}

// recorderMarker is a marker record at LevelWarn with attrs.
func recorderMarker(t time.Time, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(t, slog.LevelWarn, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

// addStats fills the recorder's fields of st.
func (r *recorder) addStats(st *Stats) {
	if r != nil {
		st.RecorderKept = r.kept.Load()
		st.RecorderWritten = r.written.Load()
		st.RecorderExpired = r.expired.Load()
		st.RecorderLost = r.lost.Load()
	}
}

// align8 rounds n up to a multiple of 8.
func align8(n uint64) uint64 { return (n + 7) &^ 7 }
