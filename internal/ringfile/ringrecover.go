package ringfile

import (
	"bytes"
	"errors"
	"fmt"
)

// flightEnd says how the output ends relative to the interrupted batch, as
// flightDone found it.
type flightEnd uint8

const (
	// flightExact: the output holds the batch's first j entries, checked
	// byte by byte, and then ends (or holds the whole batch, followed by
	// whatever was appended later). Exactly the rest is replayed.
	flightExact flightEnd = iota
	// flightTorn: the output holds the first j entries and then ends inside
	// entry j (or inside the drop marker, j == 0), with bytes that are its
	// beginning: a write torn by the crash (see tornTail).
	flightTorn
	// flightForeign: after the first j entries the output holds bytes that
	// are not entry j's: something else wrote to the file. The batch is
	// replayed from entry j, with a warning.
	flightForeign
	// flightUnknown: the position is unknown (no position, the output shrank,
	// an oversize reference of unknown length): the whole batch is replayed.
	flightUnknown
	// flightUnread: bytes that should be the batch's could not be read back:
	// the whole batch is replayed.
	flightUnread
)

// flightReadChunk bounds one read of flightDone (and its buffer).
const flightReadChunk = 1 << 20

// Reader reads a file output back for recovery: it fills b with the
// bytes at off of the output now at now and reports whether it could (all
// of b). A descriptor-based reader reads the file the descriptor is open on.
type Reader func(now Position, off int64, b []byte) bool

// flightDone returns how many leading entries of the interrupted batch ents
// (the valid entries in [st.head, st.end)) are wholly in the output, given
// where the output ends now, and how the output goes on after them (see
// flightEnd).
//
// An entry counts as written only if its bytes are in the output where the
// batch put them: the batch's records are still in the ring, so they are
// compared with the output from its size before the batch (after the drop
// marker, whose bytes are not in the ring and are measured by length only).
// Bytes someone else appended after the crash (a wrapper's banner, another
// handler's first line) are then never taken for records, whatever their
// length. Oversize records were on the heap: their bytes cannot be compared,
// so one counts as written by its length if a checked record follows it or
// the output ends right after it, and not written if bytes that are not the
// next record follow it. Reads stay within the batch's inline records (at
// most the ring's capacity), in reads of at most flightReadChunk bytes (or
// one record, if longer).
func flightDone(ents []ringEntry, st ringState, now Position, nowErr error, read Reader) (j int, end flightEnd) {
	if st.size == unknownOutputSize || nowErr != nil || now.Size < 0 {
		return 0, flightUnknown
	}
	base := st.size
	if now.Dev != st.dev || now.Ino != st.ino {
		base = 0 // the output switched files (rotation) at the start of the batch
	}
	pos := base + int64(st.pre) // where entry i's bytes begin in the output
	switch {
	case now.Size == base:
		return 0, flightExact // nothing written, not even the marker
	case now.Size < base:
		return 0, flightUnknown // the output shrank
	case now.Size < pos:
		return 0, flightTorn // inside the marker
	}
	// unchecked is the first oversize entry after the last checked record:
	// written or not depends on what follows it.
	unchecked := -1
	var buf []byte
	for i := 0; i < len(ents); {
		e := ents[i]
		if e.kind == entOversize {
			if e.size == unknownSize {
				return 0, flightUnknown // unknown length: cannot measure past it
			}
			if rest := now.Size - pos; rest < int64(e.size) {
				if rest == 0 {
					return i, flightExact // ends where it begins
				}
				return i, flightTorn // ends inside its bytes
			}
			if unchecked < 0 {
				unchecked = i
			}
			pos += int64(e.size)
			i++
			continue
		}
		// The inline entries up to the next oversize one, at most
		// flightReadChunk bytes of them (at least one): read what the output
		// holds where they belong, at most their length.
		k, runLen := inlineRun(ents, i)
		n := min(runLen, now.Size-pos)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		got := buf[:n]
		if n > 0 && (read == nil || !read(now, pos, got)) {
			return 0, flightUnread
		}
		if j, end, ok := compareRun(ents, i, k, got, &pos, &unchecked); !ok {
			return j, end
		}
		i = k
	}
	if unchecked >= 0 && pos < now.Size {
		// More bytes after oversize records that no checked record follows:
		// whether those bytes were ours cannot be told.
		return unchecked, flightForeign
	}
	return len(ents), flightExact
}

// inlineRun returns the end k of the run of inline entries from ents[i]:
// up to the next oversize entry, at most flightReadChunk bytes of them (at
// least one entry); runLen is their length in bytes.
func inlineRun(ents []ringEntry, i int) (k int, runLen int64) {
	for k = i; k < len(ents) && ents[k].kind != entOversize; k++ {
		if k > i && runLen+int64(ents[k].size) > flightReadChunk {
			break
		}
		runLen += int64(ents[k].size) // padding: 0
	}
	return k, runLen
}

// compareRun compares the entries ents[i:k] with got, the output's bytes
// where they belong (shorter only where the output ends), for flightDone.
// When all match it advances *pos past them, clears *unchecked and
// returns ok; otherwise it returns flightDone's answer.
func compareRun(ents []ringEntry, i, k int, got []byte, pos *int64, unchecked *int) (j int, end flightEnd, ok bool) {
	for ; i < k; i++ {
		d := ents[i].data // padding: nil
		if len(got) >= len(d) && bytes.Equal(got[:len(d)], d) {
			if len(d) > 0 {
				*unchecked = -1 // its bytes follow the oversize ones before it
			}
			got, *pos = got[len(d):], *pos+int64(len(d))
			continue
		}
		// got is shorter than d only where the output ends (n < runLen).
		if len(got) < len(d) && bytes.HasPrefix(d, got) {
			if len(got) == 0 {
				return i, flightExact, false // ends where it begins
			}
			return i, flightTorn, false
		}
		if *unchecked >= 0 {
			return *unchecked, flightForeign, false // the oversize bytes were not ours either
		}
		return i, flightForeign, false
	}
	return k, flightExact, true
}

// tornTail locates a record torn by the crash in a file output: when the
// output is still the file the interrupted batch went to (same device and
// inode) and ends inside the batch's drop marker (idx -1) or inside entry
// idx, it returns where the last whole record ends (cut) and how many bytes
// of the torn piece follow it (frag, > 0). ok is false in every other case.
func tornTail(ents []ringEntry, st ringState, now Position) (cut int64, idx int, frag int64, ok bool) {
	if st.size == unknownOutputSize || now.Dev != st.dev || now.Ino != st.ino || now.Size <= st.size {
		return 0, 0, 0, false
	}
	rem := now.Size - st.size
	if rem < int64(st.pre) {
		return st.size, -1, rem, true // inside the marker
	}
	at := st.size + int64(st.pre)
	rem -= int64(st.pre)
	for i, e := range ents {
		if e.kind == entOversize && e.size == unknownSize {
			return 0, 0, 0, false // unknown length: cannot measure past it
		}
		n := int64(e.size)
		if rem < n {
			if rem == 0 {
				return 0, 0, 0, false // ends at a record boundary: nothing torn
			}
			return at, i, rem, true
		}
		at, rem = at+n, rem-n
	}
	return 0, 0, 0, false // ends at or beyond the batch's end
}

// OutputCutter cuts a file output back to the end of its last whole record,
// removing a record's beginning that a crash left at its end: cut, after
// checking that the output is still at now (device, inode, size) and that
// fragment accepts the bytes from at to its end. It reports whether it cut.
type Cutter func(at int64, now Position, fragment func([]byte) bool) bool

// recoveryResult is what recover did.
type recoveryResult struct {
	recovered   uint64 // records replayed
	unrecovered uint64 // oversize references found (their bytes were on the heap)
	suspects    int    // damaged entries: invalid headers at entry boundaries (see next)
	replayedAll bool   // an in-flight batch was replayed whole: it may appear twice
	unread      bool   // ... because the output could not be read back
	flight      int    // records in that batch
	torn        bool   // the output ended inside a record of the in-flight batch
	cutMarker   bool   // the output ended inside the batch's drop marker, which was cut
	foreign     bool   // the output held other bytes where a record of the batch belonged
	foreignFrom int    // records of that batch found in the output (not replayed)
	foreignOf   int    // records in that batch
	foreignNext []byte // the beginning of the first record replayed then
}

// recover replays the committed records the file holds to w (see the
// comment at the top of this file) and resets the ring. It returns an error
// only if the output failed; the file then still holds what was not written.
// Records of a run with numbers are replayed with that run's numbers and
// identity (ringseq.go).
func (r *File) recover() (recoveryResult, error) {
	var res recoveryResult
	im := &ringImage{capacity: r.capacity, mask: r.capacity - 1, st: r.st, seq: r.st.seqFmt, ring: r.ring(), o: r.o}
	dead := r.st.deadRun()
	r.seq = nil
	if dead.on() {
		r.seq = &dead // written persists the dead run's numbering while replaying
	}
	head := r.st.head
	if r.st.end > head {
		head = r.settleFlight(im, &res)
		dead = r.st.deadRun()
	}
	if err := r.replay(im, head, &res); err != nil {
		return res, err
	}
	if res.recovered > 0 && r.o.Sync != nil {
		if err := r.o.Sync(); err != nil {
			return res, fmt.Errorf("asyncbus: sync after replaying the ring file: %w", err)
		}
	}
	return res, nil
}

// settleFlight is recovery's first phase: it decides how much of the batch
// the crash interrupted ([head, end) in the state) reached the output, by
// reading the output back (flightDone), cuts back a record the crash tore
// where that is safe, records what it found in res, and publishes the new
// head (with numbers: the number of the first record after it, or a drop
// marker still owed). It returns the position replay starts from.
func (r *File) settleFlight(im *ringImage, res *recoveryResult) uint64 {
	head := r.st.head
	numbering := r.st.deadRun() // the batch's records as the dead drainer numbered them
	var ents []ringEntry
	for pos := head; ; {
		e, sus, ok := im.next(pos, r.st.end)
		res.suspects += sus
		numbering.next += uint64(sus) // as in replay
		if !ok {
			break
		}
		e.took = r.numberEntry(&e, &numbering)
		ents = append(ents, e)
		pos = e.end
	}
	var now Position
	nowErr := errors.New("unknown output position")
	if r.o.Position != nil {
		now, nowErr = r.o.Position()
	}
	j, end := flightDone(ents, r.st, now, nowErr, r.o.Read)
	if end == flightTorn && r.o.Cut != nil {
		j, end = r.cutTorn(ents, now, j, end, res)
	}
	if end == flightExact || end == flightForeign {
		// An output that set a torn tail aside at its own open learns which
		// record is written again first (filesink: no alarm if the
		// fragment is its beginning). Wrap padding writes nothing: the
		// first record is the one after it.
		first := j
		for first < len(ents) && ents[first].kind == entPadding {
			first++
		}
		if r.o.Settle != nil && first < len(ents) && ents[first].kind == entRecord {
			r.o.Settle(ents[first].data)
		}
	}
	res.noteFlight(ents, j, end)
	if j > 0 {
		head = ents[j-1].end
	}
	s := r.st
	s.head, s.end, s.pre = head, head, 0
	if r.seq != nil {
		s.seqNext, s.seqMark = flightNumbers(ents, j, end, r.st, now, res.cutMarker)
	}
	r.publish(s) // one atomic switch: the measurement is never applied twice
	return head
}

// cutTorn handles an output that ends in the beginning of a record (or of
// the marker) that the crash tore: it cuts it back, if it is exactly that,
// so the record is written again whole and only once, and returns the
// flight's new first record to write and its end kind.
func (r *File) cutTorn(ents []ringEntry, now Position, j int, end flightEnd, res *recoveryResult) (int, flightEnd) {
	at, idx, frag, torn := tornTail(ents, r.st, now)
	if !torn {
		return j, end
	}
	match := func(b []byte) bool { return int64(len(b)) == frag && bytes.IndexByte(b, '\n') < 0 }
	if idx >= 0 && ents[idx].kind == entRecord {
		want := ents[idx].data[:frag]
		match = func(b []byte) bool { return bytes.Equal(b, want) }
	}
	if !r.o.Cut(at, now, match) {
		return j, end
	}
	res.cutMarker = idx < 0
	return max(idx, 0), flightExact
}

// noteFlight records in res what recovery found of the interrupted batch
// ents, of which the first j reached the output, ended as end says.
func (res *recoveryResult) noteFlight(ents []ringEntry, j int, end flightEnd) {
	switch end {
	case flightTorn:
		res.torn = true
	case flightForeign:
		res.foreign = true
		for i, e := range ents {
			if e.kind != entRecord {
				continue
			}
			if i < j {
				res.foreignFrom++
			} else if res.foreignNext == nil {
				res.foreignNext = bytes.Clone(e.data[:min(len(e.data), 60)])
			}
			res.foreignOf++
		}
	case flightUnknown, flightUnread:
		for _, e := range ents {
			if e.kind == entRecord {
				res.flight++
			}
		}
		res.replayedAll = res.flight > 0
		res.unread = end == flightUnread
	}
}

// replay is recovery's second phase: it writes every record from head to
// the end of the image to w, in batches of maxBatch, persisting progress
// after each, and counts oversize references (their bytes were on the
// heap) as unrecovered. With numbers (r.seq), it numbers the records as
// the dead drainer did and writes the drop marker the state owes, and one
// for the numbers oversize records took, in front of the next batch.
func (r *File) replay(im *ringImage, head uint64, res *recoveryResult) error {
	limit := r.st.zeroed + r.capacity
	maxBatch := max(r.o.MaxBatch, 1)
	rp := replayer{r: r, owedAt: r.st.seqNext, owed: r.st.seqMark}
	pos := head
	for {
		e, sus, ok := im.next(pos, limit)
		res.suspects += sus
		if r.seq != nil {
			r.seq.next += uint64(sus) // a damaged entry leaves a number out: the reader sees a loss there
		}
		if !ok {
			break
		}
		pos = e.end
		if r.seq != nil {
			r.numberEntry(&e, r.seq)
		}
		switch e.kind {
		case entOversize:
			if len(rp.batch) > 0 {
				if err := rp.flush(e.pos, res); err != nil {
					return err
				}
			}
			res.unrecovered++
			rp.lose(e.end)
		case entRecord:
			rp.batch = append(rp.batch, e.data)
			if len(rp.batch) >= maxBatch {
				if err := rp.flush(e.end, res); err != nil {
					return err
				}
			}
		}
	}
	if len(rp.batch) > 0 || rp.owed > 0 {
		if err := rp.flush(pos, res); err != nil {
			return err
		}
	}
	return nil
}

// replayer is replay's batch in hand and the drop marker it owes.
type replayer struct {
	r      *File
	batch  [][]byte
	owedAt uint64 // the owed marker's first number
	owed   uint64 // the owed marker's count (0: none)
}

// flush writes the batch, behind the owed marker if any, and persists that
// everything below end is in the output.
func (rp *replayer) flush(end uint64, res *recoveryResult) error {
	r := rp.r
	var views [][]byte
	pre := 0
	if rp.owed > 0 && r.seq != nil {
		if m := r.owedMarker(r.seq, rp.owedAt, rp.owed); m != nil {
			views, pre = append(views, m), len(m)
		}
	}
	views = append(views, rp.batch...)
	if len(views) > 0 {
		r.begin(end, pre, rp.owed)
		if err := r.o.Write(views); err != nil {
			return err
		}
		res.recovered += uint64(len(rp.batch))
		clear(rp.batch)
		rp.batch = rp.batch[:0]
	}
	rp.owed = 0
	r.written(end)
	return nil
}
