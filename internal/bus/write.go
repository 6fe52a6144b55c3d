package bus

import (
	"errors"
	"io"
	"os"

	"github.com/asyncbus/asyncbus/internal/outputcall"
	"github.com/asyncbus/asyncbus/internal/syncerr"
	"github.com/asyncbus/asyncbus/internal/writev"
)

// outputKind is how the drainer hands a batch to the output.
type outputKind int

const (
	outputCopy   outputKind = iota // copy into one staging buffer, one Write
	outputBatch                    // BatchWriter.WriteBatch(views)
	outputWritev                   // writev(2) through syscall.RawConn, <= writev.Max records per call
)

// useWritev selects writev(2), where the platform has it, for *os.File and
// other syscall.Conn outputs (docs/design.md, Batching, says why the
// defaults are what they are).
var useWritev = true

// writevRegular selects writev(2) for an *os.File on a regular file too.
// Off: a regular file is written by copying the batch into one staging
// buffer and one write(2); pipes, sockets and devices keep writev. Tests
// set it to exercise writev on files.
var writevRegular = false

// outputKindOf is how the drainer hands a batch to w, with the writev
// writer for outputWritev.
func outputKindOf(w io.Writer) (outputKind, *writev.Writer) {
	if _, ok := w.(BatchWriter); ok {
		return outputBatch, nil
	}
	if f, ok := w.(*os.File); ok && !writevRegular {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return outputCopy, nil
		}
	}
	if !useWritev {
		return outputCopy, nil
	}
	if wv := writev.New(w); wv != nil {
		return outputWritev, wv
	}
	return outputCopy, nil
}

// viewKind says what a batch entry is, for the accounting after the write.
type viewKind uint8

const (
	kRecord   viewKind = iota // inline ring record
	kOversize                 // heap record from the side table
	kMarker                   // drop marker (not a record)
)

// writeRound writes the batch, accounts for it, and releases its ring space.
func (d *drainer) writeRound(act batchAction) {
	b := d.b
	done, off := 0, 0
	admitted := d.admit(act)
	if admitted && b.file != nil {
		pre, mark := 0, uint64(0)
		if d.kinds[0] == kMarker {
			pre, mark = len(d.views[0]), d.seqMarkN // a marker only ever opens a batch
		}
		b.file.Begin(d.pos, pre, mark) // persisted before the write starts
	}
	if admitted {
		start := b.nanotime()
		calls := b.writeCalls.Load() // atomic, row writeCalls: the drainer is its only writer
		done, off = d.write()
		end := b.nanotime()
		if done > 0 {
			d.qd.Written(d.head, end) // the queue's delay (the queuedelay stage)
		}
		if b.quietWaits {
			d.countRecords(d.nrec, end)
		}
		if done == len(d.views) {
			d.measure(end-start, b.writeCalls.Load()-calls) // atomic, row writeCalls
		}
	}
	if done < len(d.views) && off > 0 {
		d.tear(off)
	}
	written, wbytes, failed, _, markers := d.tally(done)
	// Add: a give-up count may add to the same counters (see the drainer
	// statistics table).
	b.written.Add(written)     // atomic, row written
	b.writtenBytes.Add(wbytes) // atomic, row writtenBytes
	b.failed.Add(failed)       // atomic, row failed
	b.markers.Add(markers)     // atomic, row markers
	if done > 0 {
		b.batches.Add(1) // atomic, row batches
	}
	d.woken = false
	d.progIdx = 0
	if done > 0 {
		b.lastBatch.Store(uint64(d.nrec)) // atomic, row lastBatch
	}
	clear(d.views) // drop references to oversize records
	d.views, d.kinds, d.nrec, d.bytes = d.views[:0], d.kinds[:0], 0, 0
	d.release()
}

// tally counts the batch in hand whose first done views are in the output:
// records written and failed (and their bytes), markers written.
func (d *drainer) tally(done int) (written, wbytes, failed, fbytes, markers uint64) {
	for i, k := range d.kinds {
		switch {
		case k == kMarker:
			if i < done {
				markers++
			}
		case i < done:
			written++
			wbytes += uint64(len(d.views[i]))
		default:
			failed++
			fbytes += uint64(len(d.views[i]))
		}
	}
	return written, wbytes, failed, fbytes, markers
}

// release zeroes the consumed space and publishes the new head.
func (d *drainer) release() {
	b := d.b
	if b.file != nil {
		// The output's write call has returned: only now may the file say so.
		// Persisted before the zeroing, which destroys the records.
		b.file.Written(d.pos, b.seq.Next)
	}
	if span := d.pos - d.head; span > 0 {
		lo, hi := b.offsetOf(d.head), b.offsetOf(d.pos)
		switch {
		case span >= b.capacity:
			clear(b.mem)
		case lo < hi:
			clear(b.mem[lo:hi])
		default:
			clear(b.mem[lo:])
			clear(b.mem[:hi])
		}
		b.entries.Add(d.nent)  // atomic, row entries
		b.entryBytes.Add(span) // atomic, row entryBytes
	}
	d.nent = 0
	if b.file != nil {
		// After the zeroing, before producers can see the new head: recovery
		// never scans beyond zeroed+capacity, i.e. into space that may still
		// hold consumed records.
		b.file.ZeroedTo(d.pos)
	}
	if d.ovBytes > 0 {
		b.oversizeBytes.Add(-d.ovBytes) // atomic, row oversizeBytes
		d.ovBytes = 0
	}
	// Release store: the zeroing above happens-before the writes of any
	// producer that loads this head and reserves the space.
	b.head.Store(d.pos) // atomic, row head
	d.head = d.pos
	d.rewind()
	// Sequentially consistent after the head store; see the park in Bus.waitForRoom.
	if b.waiters.Load() > 0 { // atomic, row waiters
		b.broadcastSpace()
	}
}

// rewind moves the positions of an empty ring to the next start of its
// memory once they are rewindAt bytes or more into it, so that a drainer
// that keeps up keeps producers writing to the ring's first rewindAt
// bytes and what is queued past them: those pages stay in cache and
// resident, the rest are never touched (docs/design.md, Rewound when
// empty). The skipped space holds no entry: it was consumed and zeroed, so
// no header needs writing.
//
// The CAS succeeds only if tail is still head (nothing reserved, not
// closed). Between it and the head store a producer may see the new tail
// with the old head: the skipped bytes then look queued. It still finds
// room, as offset >= rewindAt >= any entry; such a stale view only skips
// a quiet wait or counts the bytes in a Stats snapshot, as a producer that
// read head before the drainer moved it does (a pace test reads the zero
// word at head: hopeless). Not with a ring file, whose recovery reads
// positions.
func (d *drainer) rewind() {
	b := d.b
	off := uint64(b.offsetOf(d.head))
	if off < b.rewindAt || b.file != nil {
		return
	}
	next := d.head + b.capacity - off
	if !b.tail.CompareAndSwap(d.head, next) { // atomic, row tail: only an empty, open ring
		return
	}
	b.head.Store(next) // atomic, row head: the skipped space was zeroed when consumed
	d.head, d.pos = next, next
}

// admit carries out batchAction's answer up to the batch's write: it reports
// whether the batch is written. It is not (the batch fails at once,
// counted as failed) for actFailFast, or when the bytes owed from an
// earlier torn record cannot be written. The owed bytes go out here, before
// the ring file records the output's position for the batch.
func (d *drainer) admit(act batchAction) bool {
	b := d.b
	switch act {
	case actFailFast:
		if !b.aborted.Load() { // atomic, row aborted: a Close that gave up counts without a report
			d.fastFails++
			d.report("write", d.lastErr) // rate-limited: counted as a suppressed repeat
		}
		return false
	case actProbe:
		d.probing = true
	}
	probe := d.probing
	for attempts := 0; len(d.owed) > 0; {
		if !d.enterCall() {
			return false
		}
		n, err := outputcall.Write(b.w, d.owed)
		d.leaveCall()
		b.writeCalls.Add(1) // atomic, row writeCalls
		n = max(0, min(n, len(d.owed)))
		d.owed = d.owed[n:]
		if n > 0 {
			probe = false
			d.progress() // the output works again
		}
		if err == nil {
			if n > 0 || len(d.owed) == 0 {
				continue
			}
			err = io.ErrShortWrite
		}
		attempts++
		if !d.afterWriteError(err, probe && n == 0, attempts) {
			return false
		}
	}
	return true
}

// afterWriteError handles a failed attempt: it reports err and, unless this was a
// probe or the last of the batch's attempts, backs off and returns true
// (try again). Otherwise the output is failing: it schedules the next probe
// and returns false.
func (d *drainer) afterWriteError(err error, probe bool, attempts int) bool {
	b := d.b
	d.lastErr = err
	d.setFailing(true)
	d.report("write", err)
	d.failStreak = min(d.failStreak+1, maxFailShift)
	backoff := min(b.retryBase<<(d.failStreak-1), b.retryMax)
	if probe || attempts >= b.retries {
		d.down, d.probing = true, false
		d.probeAt = d.now().Add(backoff)
		return false
	}
	if attempts >= DefaultWriteAttempts {
		// Config.WriteAttempts raised the budget: the batch is retried on,
		// but callers waiting for the output (Flush, Sync, a record written
		// before its Handle returns) wait no longer than the default budget
		// would have made them: they get the error now, and their records
		// stay queued for the remaining attempts.
		d.answerWaiting(err)
	}
	return d.sleepFor(backoff, false) // false: Close gave up
}

// write hands the batch to the output, completing short writes and retrying
// failures with exponential back-off. It returns how many leading views were
// written completely (the rest count as failed) and how many bytes of the
// next one are in the output. While the output is failing (see
// drainer.down) the first attempt is a probe: if it makes no progress,
// the batch fails at once.
func (d *drainer) write() (int, int) {
	b := d.b
	if b.kind == outputCopy {
		d.stage()
	}
	idx, off, attempts := 0, 0, 0
	probe := d.probing
	for idx < len(d.views) {
		d.progIdx = idx
		if !d.enterCall() {
			break // Close gave up: what is left counts as failed
		}
		nidx, noff, err := d.step(idx, off)
		d.leaveCall()
		progressed := nidx > idx || noff > off
		idx, off = nidx, noff
		if progressed {
			probe = false
			d.progress() // the output works again
		}
		if err == nil {
			if progressed || idx >= len(d.views) {
				d.failStreak = 0
				continue
			}
			err = io.ErrShortWrite // no progress and no error: never loop on it
		}
		if idx >= len(d.views) || progressed {
			// Everything was taken, with an error (a batch output whose
			// failed records are not retried, such as otlpsink's refused
			// drop marker): report it, with no back-off for nothing left.
			// Or part was taken (a net.Conn's write deadline): go on at
			// once, so that a record is never torn while the output
			// makes progress; only attempts that write nothing count.
			d.lastErr = err
			d.report("write", err)
			continue
		}
		attempts++
		if !d.afterWriteError(err, probe, attempts) {
			break
		}
	}
	if d.wb != nil && idx == len(d.views) && d.wb.Due(d.bytes) && d.enterCall() {
		_ = d.wb.Start() // a hint: an error leaves the pages to the next sync
		d.leaveCall()
	}
	return idx, off
}

// tear handles a batch given up on with the first off bytes of a record in
// the output. That record counts as failed, and the next record must not be
// glued to its fragment: a regular *os.File whose end is still our
// fragment's end is cut back to the record's start; anything else owes a
// newline, written before the next record (see admit).
func (d *drainer) tear(off int) {
	err := errNotCut
	if d.enterCall() {
		err = cutBack(d.b.w, int64(off))
		d.leaveCall()
	}
	if err != nil {
		if err != errNotCut {
			d.report("truncate", err)
		}
		d.owed = append(d.owed[:0], '\n')
	}
}

var errNotCut = errors.New("not a regular file whose end is this record's fragment")

// cutBack removes the last n bytes of w, the fragment of a record whose
// write failed part-way, if w is a regular *os.File whose size equals our
// file offset (so the fragment is still the file's end: with O_APPEND and
// other writers, another process may have appended after it, and then
// nothing is cut). It then moves the offset back, so that a file opened
// without O_APPEND does not get a hole. A writer appending between the
// size check and the truncate would lose its bytes: files shared with
// other writers should not fail part-way through a record.
func cutBack(w io.Writer, n int64) error {
	f, ok := w.(*os.File)
	if !ok {
		return errNotCut
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errNotCut
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if pos != fi.Size() || pos < n {
		return errNotCut
	}
	if err := f.Truncate(pos - n); err != nil {
		return err
	}
	_, err = f.Seek(pos-n, io.SeekStart)
	return err
}

// step makes one call into the output from record idx, byte off.
func (d *drainer) step(idx, off int) (int, int, error) {
	b := d.b
	switch b.kind {
	case outputBatch:
		n, err := outputcall.WriteBatch(b.w.(BatchWriter), d.views[idx:])
		b.writeCalls.Add(1) // atomic, row writeCalls
		n = max(0, min(n, len(d.views)-idx))
		return idx + n, 0, err
	case outputWritev:
		idx, off, called, err := d.wv.Write(d.views, idx, off)
		if called {
			b.writeCalls.Add(1) // atomic, row writeCalls
		}
		return idx, off, err
	}
	start := off
	if idx > 0 {
		start += d.ends[idx-1]
	}
	if start >= len(d.out) {
		return len(d.views), 0, nil // only empty records remain
	}
	n, err := outputcall.Write(b.w, d.out[start:])
	b.writeCalls.Add(1) // atomic, row writeCalls
	n = max(0, min(n, len(d.out)-start))
	idx, off = advance(d.ends, idx, start+n)
	return idx, off, err
}

// advance converts a byte position in the concatenated batch into (record,
// offset within it), skipping records that are complete (including empty ones).
func advance(ends []int, idx, pos int) (int, int) {
	for idx < len(ends) && ends[idx] <= pos {
		idx++
	}
	switch idx {
	case 0:
		return 0, pos
	case len(ends):
		return idx, 0
	}
	return idx, pos - ends[idx-1]
}

// stage puts the batch in d.out for one Write: copied into the staging
// buffer, which collect's byte cap keeps it within (it never grows but
// for a drop marker over a page); a batch of one record too large for it
// is written from that record's own memory.
func (d *drainer) stage() {
	d.ends = d.ends[:0]
	if len(d.views) == 1 && len(d.views[0]) > cap(d.staging) {
		d.out = d.views[0]
		d.ends = append(d.ends, len(d.out))
		return
	}
	d.staging = d.staging[:0]
	for _, v := range d.views {
		d.staging = append(d.staging, v...)
		d.ends = append(d.ends, len(d.staging))
	}
	d.out = d.staging
}

// progress ends the output's failing state: a call into it took something.
func (d *drainer) progress() {
	d.down, d.probing = false, false
	d.setFailing(false)
}

// setFailing publishes whether the drainer's last call into the output
// failed (retrying or down), for callers' waits (outputWatch.failing):
// stored only on a change.
func (d *drainer) setFailing(f bool) {
	if d.failing != f {
		d.failing = f
		d.b.failing.Store(f) // atomic, row failing: a stale value only skips or makes one bounded wait
	}
}

// sync syncs the output if it is a Syncer; an output that cannot
// sync (a pipe, a terminal) is no failure.
func (d *drainer) sync() error {
	s, ok := d.b.w.(Syncer)
	if !ok || !d.enterCall() { // enterCall refuses once Close gave up
		return nil
	}
	err := outputcall.Sync(s)
	d.leaveCall()
	if syncerr.NotSyncable(err) {
		return nil // pipes, terminals, sockets: nothing to make durable
	}
	if err != nil {
		d.report("sync", err)
	}
	return err
}
