package ringfile

// The durable ring: the bus's ring in a memory-mapped file.
//
// # Why it survives kill -9
//
// The file is mapped MAP_SHARED, so every store a producer or the drainer
// makes into the ring lands directly in the kernel's page cache. When the
// process dies (SIGKILL, panic, OOM kill, a crash in cgo) the pages stay
// there, and the next process that opens the file sees exactly the stores
// the dead one had made. Power loss is different: the kernel may not have
// written the pages back yet (or may have written back only some of them),
// which is what the checksums below are for.
//
// # File format (version 2, little-endian)
//
//	offset 0     magic "ABUSRING"
//	offset 8     version uint32 (2; version 1 files are still opened)
//	offset 12    header size uint32 (4096; the ring starts there)
//	offset 16    capacity uint64 (a power of two; file size = 4096 + capacity)
//	offset 24    CRC-32C of bytes 0..23, uint32
//	offset 64    state slot 0 (64 bytes)
//	offset 128   state slot 1 (64 bytes)
//	offset 192   generation uint64: the current state is slot generation&1
//	offset 256   sequence slot 0 (64 bytes; version 2)
//	offset 320   sequence slot 1 (64 bytes; version 2)
//	offset 4096  the ring: capacity bytes, the layout of package async
//
// A state slot holds the drainer's cursors: head (everything below it has
// been written to the output), zeroed (everything below it has been zeroed),
// and the batch being written: end (its end; end == head when no write is
// in flight), pre (bytes of a drop marker written in front of its records),
// and the output's position before it (size, -1 if unknown, and the device and
// inode of the output), followed by a CRC-32C of those seven words. The
// drainer publishes a new state by filling the slot that is not current and
// then storing generation+1: the generation word is a single aligned 8-byte
// store, so a crash at any instant leaves either the old state or the new one,
// never a mix.
//
// A sequence slot (version 2) goes with the state slot of the same index,
// filled before the same generation store: the numbering (the bus's sequence numbers)
// of the run that accepted the ring's records, see ringseq.go. Version 1
// files have none: their records are replayed without numbers, and the file
// is rewritten as version 2 once it is empty (a crash during that rewrite
// leaves a header that does not add up: the file, empty, is renamed aside).
//
// # Record checksums
//
// In a file-backed ring the producer puts a 29-bit checksum (Sum: CRC-32C of
// the payload seeded with its length, truncated) in spare bits of the header
// word it commits with its one atomic store, so the commit stays a single
// store. Where those bits are is the bus's layout (Layout.Decode finds them).
// Recovery replays a record only if its checksum matches. With sequence
// numbers the checksum leaves out the record's headroom, where the drainer
// writes the number after the commit (Sum's room).
//
// # Ordering (drainer)
//
// For each batch: publish {end: batch end, output position now}; write to the
// output; publish {head: batch end}; zero the consumed ring space; publish
// {zeroed: batch end}; only then publish head to producers (Bus.head). The
// output's write system call has returned before the state that says "written"
// is stored, so a crash can never mark unwritten records as written. A crash
// during the write leaves the batch "in flight"; recovery then checks how far
// the output got (for a file output: its bytes after its size before the batch,
// compared with the batch's records, which are still in the ring) and
// replays the rest.
//
// # Recovery (before the bus accepts anything)
//
//  1. The in-flight batch, if any: with a known output position, the records
//     whose bytes are in the output where the batch put them are skipped
//     (exactly once); a record counts as there only if the file's bytes are
//     its bytes, never by the file's size alone (see flightDone). If other
//     bytes stand where a record belongs (something appended to the file
//     after the crash, or during the write), the batch is replayed from that
//     record, after those bytes, with a warning: a record the crash had
//     already written beyond them then appears twice, but none is lost
//     silently. With no position (a pipe, a terminal, an unknown io.Writer)
//     or an output that cannot be read back, the whole batch is replayed, so
//     its records can appear twice, and a warning says so. If the output is
//     the same regular *os.File and ends inside a record of the batch (the
//     kill interrupted the write), the torn beginning is cut off first when
//     it is exactly that (see tornTail, FileCutter), so the record is written
//     again whole, once. A filesink.File has cut its own torn tail at open:
//     it is told the record written again first (SettleTornTail), so that
//     its repair raises no alarm for a record nothing lost.
//  2. Scan from head to zeroed+capacity (beyond that lies space the dead
//     drainer consumed but had not finished zeroing) and write every committed
//     record whose checksum matches to the output, in ring order, in chunks that
//     follow the same in-flight protocol, so a crash during recovery is
//     recovered the same way.
//  3. Sync the output, zero the ring and publish an empty state.
//
// Reservations that were never committed (the producer died between its CAS
// and its header store, possibly half-way through copying its record) have
// a zero header word. They are not damage and are skipped quietly: the
// record was never accepted (its Handle never returned), so it is neither
// replayed nor counted as lost (not in Result.Unrecovered). Their length was
// never recorded, so the scan steps word by word through whatever payload
// the producer had copied until the next valid entry: a word is only taken
// as an entry if its commit bit is set, its length fits the ring and the
// 29-bit checksum of the bytes it covers matches (for padding and oversize
// references: the exact shape those have), so no gap needs to stop the scan.
// The chance that payload bytes of a dead reservation look like a valid
// header is about 2^-29 per 8-byte word whose top bit is set, and zero for
// ASCII payloads, whose words never have the commit bit.
//
// Damage is told from dead reservations by where it is: entries are
// contiguous, so the word at an entry boundary (head, or the end of a valid
// entry) must be zero or a valid header. A word with the commit bit there
// that is not a valid entry (corruption, e.g. after power loss) is counted
// as one damaged entry; if there are any, a copy of the file is kept as
// <file>.corrupt-<time>, a warning goes to OnError, and the valid records
// are still replayed. Words with the commit bit inside a dead reservation's
// payload are never counted.
//
// A header that is not ours or not sane (bad magic, a version from the
// future, a header CRC or state CRC that does not match, a file size or
// cursors that do not add up) means nothing in the file can be trusted: it is
// renamed to <file>.corrupt-<time>, OnError gets a *Error, and the
// bus starts with a fresh file. Nothing of it is replayed.
//
// Not durable: oversize records (longer than MaxRecord) live on the heap; only
// their 8-byte reference (with their length) is in the ring, so recovery can
// only count them (Result.Unrecovered, and a warning). Drop markers for gaps
// that had not been written are lost too (the drops they report were never
// accepted).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/asyncbus/asyncbus/internal/plural"
)

// ErrLocked is returned (wrapped) by Open when the ring file is locked by
// another process (or by another File in this one).
var ErrLocked = errors.New("ring file is in use by another process")

// ErrUnsupported is returned by Open on platforms without mmap and flock.
var ErrUnsupported = errors.New("asyncbus: ring files are not supported on this platform")

// errUnsupported is ErrUnsupported naming this system and why.
func errUnsupported() error {
	return fmt.Errorf("%w: Options.Ring.File needs mmap and flock, which %s/%s lacks", ErrUnsupported, runtime.GOOS, runtime.GOARCH)
}

// Error reports a ring file that could not be trusted (whole or in part).
// It is passed to Options.Warn; the ring then starts from a fresh file.
type Error struct {
	Path   string // the ring file
	Reason string // what was wrong with it
	Aside  string // where the damaged file was renamed or copied ("" if nowhere)
}

// Error implements error.
func (e *Error) Error() string {
	s := "asyncbus: ring file " + e.Path + ": " + e.Reason
	if e.Aside != "" {
		s += "; kept as " + e.Aside
	}
	return s
}

// Position says where a file output ends: the device and inode of the file
// and its size.
type Position struct {
	Dev, Ino uint64
	Size     int64
}

// Ring file format constants (see the comment at the top of this file).
const (
	ringMagic         = "ABUSRING"
	ringVersion       = 2
	ringVersion1      = 1 // no sequence slots
	ringHeaderSize    = 4096
	ringStaticCRC     = 24  // offset of the CRC of the static header
	ringSlot0         = 64  // offset of state slot 0
	ringSlotSize      = 64  // 8 words: 7 state words + CRC
	ringGeneration    = 192 // offset of the generation word
	ringSeqSlot0      = 256 // offset of sequence slot 0 (version 2)
	sumMask           = uint64(1)<<SumBits - 1
	unknownOutputSize = -1
	// unknownSize is an entry's written length when it cannot be known (an
	// oversize record that took a number: the prefix's length is lost).
	unknownSize = ^uint64(0)
)

// SumBits is the width of Sum: the spare bits a header word of the bus's
// layout has for it.
const SumBits = 29

// MinCapacity and MaxCapacity bound the ring capacity a file may declare
// (a power of two): the bus's own bounds must lie within them.
const (
	MinCapacity = 64
	MaxCapacity = 1 << 30
)

// RunIDLen is the length of the run identity a sequence slot keeps.
const RunIDLen = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sum is the SumBits-bit checksum a durable producer puts in its record's
// header word: CRC-32C of p after its first room bytes (the headroom a
// sequence number is written into after the commit; 0 without numbers),
// seeded with the whole length (so a prefix of a record never carries the
// record's sum), truncated. A record shorter than room is summed whole.
func Sum(p []byte, room int) uint64 {
	if len(p) < room {
		room = 0
	}
	return uint64(crc32.Update(uint32(len(p)), castagnoli, p[room:])) & sumMask
}

// ringState is one state slot: the drainer's persisted cursors.
type ringState struct {
	head   uint64 // all records below were written to the output
	zeroed uint64 // all ring space below was zeroed
	end    uint64 // end of the batch in flight; == head when none
	pre    uint64 // bytes written before the batch's first record (a drop marker)
	size   int64  // output size before the batch, or unknownOutputSize
	dev    uint64 // output device, with size
	ino    uint64 // output inode, with size

	// The sequence slot (ringseq.go): the numbering of the run that
	// accepted the ring's records. seqNext is the first number the output
	// may not hold: seqMark numbers from it belong to a drop marker (the
	// one opening the batch in flight, or, with none in flight, one owed
	// by recovery), and the first record at head gets seqNext+seqMark.
	seqNext uint64
	seqMark uint64
	seqFmt  uint8
	seqRun  [RunIDLen]byte
}

func (s *ringState) words() [7]uint64 {
	return [7]uint64{s.head, s.zeroed, s.end, s.pre, uint64(s.size), s.dev, s.ino}
}

func stateCRC(w [7]uint64) uint64 {
	var b [56]byte
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return uint64(crc32.Checksum(b[:], castagnoli))
}

// staticHeader returns the first 32 bytes of a ring file of the capacity.
func staticHeader(capacity uint64) []byte {
	h := make([]byte, 32)
	copy(h, ringMagic)
	binary.LittleEndian.PutUint32(h[8:], ringVersion)
	binary.LittleEndian.PutUint32(h[12:], ringHeaderSize)
	binary.LittleEndian.PutUint64(h[16:], capacity)
	binary.LittleEndian.PutUint32(h[ringStaticCRC:], crc32.Checksum(h[:ringStaticCRC], castagnoli))
	return h
}

// File is an open, locked, mapped ring file: the bus's ring lives in
// Ring(), and the drainer persists its cursors with Begin, Written and
// ZeroedTo. Its methods are the drainer's alone (no method is safe for
// concurrent use).
type File struct {
	path     string
	f        *os.File
	data     []byte // the whole mapping
	capacity uint64
	st       ringState // the current state (drainer-private after Open)
	gen      uint64
	version  uint32   // the file's format version as opened
	o        *Options // how to read entries, number them and reach the output
	// seq is the numbering whose state written persists: the bus's
	// (Options.Run) after recovery, the dead run's during it; nil for none.
	seq      *numbering
	seqBlank [2]bool // sequence slot i holds the empty numbering (storeSeqSlot)
}

// Ring returns the ring region of the mapping: capacity bytes, 8-byte
// aligned (the mapping is page-aligned), valid until Close.
func (r *File) Ring() []byte { return r.ring() }

// ring returns the ring region of the mapping.
func (r *File) ring() []byte { return r.data[ringHeaderSize : ringHeaderSize+r.capacity] }

// word returns a pointer to the 8-byte word at header offset off.
// unsafe: the mapping is page-aligned and off is a multiple of 8 inside the
// header page, so the pointer is aligned and in bounds; r.data keeps the
// mapping referenced until close.
func (r *File) word(off int) *uint64 {
	return (*uint64)(unsafe.Pointer(&r.data[off]))
}

// publish makes s the current state: it fills the slot that is not current,
// then flips the generation. Each store is atomic (a single aligned 8-byte
// write that the compiler may neither split nor move), and the generation is
// stored last, so a crash between any two stores leaves the old state or s.
func (r *File) publish(s ringState) {
	w := s.words()
	slot := ringSlot0 + ringSlotSize*int((r.gen+1)&1)
	for i, v := range w {
		atomic.StoreUint64(r.word(slot+8*i), v) // atomic, row state slots
	}
	atomic.StoreUint64(r.word(slot+56), stateCRC(w)) // atomic, row state slots
	r.storeSeqSlot(ringSeqSlot0+ringSlotSize*int((r.gen+1)&1), s)
	r.gen++
	atomic.StoreUint64(r.word(ringGeneration), r.gen) // atomic, row generation
	r.st = s
}

// initHeader writes a fresh header with an empty state (and the bus's
// numbering from its start). The sequence slot 0 is stored before the static
// header, which names the version that has it.
func (r *File) initHeader() {
	s := r.emptyState()
	r.storeSeqSlot(ringSeqSlot0, s)
	copy(r.data, staticHeader(r.capacity))
	r.gen = 0
	w := s.words()
	for i, v := range w {
		atomic.StoreUint64(r.word(ringSlot0+8*i), v) // atomic, row state slots
	}
	atomic.StoreUint64(r.word(ringSlot0+56), stateCRC(w)) // atomic, row state slots
	atomic.StoreUint64(r.word(ringGeneration), 0)         // atomic, row generation
	r.st, r.version = s, ringVersion
}

// outputPos returns the output's position, or unknownOutputSize (also when the
// output's code panicked: the position is only a hint for recovery).
func (r *File) outputPos() (size int64, dev, ino uint64) {
	if r.o.Position == nil {
		return unknownOutputSize, 0, 0
	}
	defer func() {
		if recover() != nil {
			size, dev, ino = unknownOutputSize, 0, 0
		}
	}()
	p, err := r.o.Position()
	if err != nil || p.Size < 0 {
		return unknownOutputSize, 0, 0
	}
	return p.Size, p.Dev, p.Ino
}

// begin records that the batch ending at end (with pre bytes of marker in
// front, for mark lost records' numbers) is about to be written. Called by
// the drainer before the write.
func (r *File) begin(end uint64, pre int, mark uint64) {
	s := r.st
	s.end, s.pre = end, uint64(pre)
	s.size, s.dev, s.ino = r.outputPos()
	if r.seq != nil {
		s.seqMark = mark
	}
	r.publish(s)
}

// Begin records that the batch ending at ring position end, with pre bytes
// of drop marker in front (for the mark numbers of lost records, with
// numbers), is about to be written. The drainer calls it before the write.
func (r *File) Begin(end uint64, pre int, mark uint64) { r.begin(end, pre, mark) }

// Written records that everything below ring position pos is in the
// output and, with numbers, that the next record gets number next. The
// drainer calls it after the output's write returned, before zeroing.
func (r *File) Written(pos, next uint64) {
	if r.seq != nil {
		r.seq.next = next
	}
	r.written(pos)
}

// ZeroedTo records that the ring space below pos is zero. The drainer
// calls it after zeroing, before producers may reuse the space.
func (r *File) ZeroedTo(pos uint64) { r.zeroedTo(pos) }

// Close unmaps the file and closes it, which releases the lock.
func (r *File) Close() { r.close() }

// written records that everything below pos is in the output (and, with
// numbers, the number the next record gets). Called by the drainer after
// the output's write returned, before the space is zeroed.
func (r *File) written(pos uint64) {
	s := r.st
	s.head, s.end, s.pre = pos, pos, 0
	if r.seq != nil {
		s.seqNext, s.seqMark = r.seq.next, 0
	}
	r.publish(s)
}

// zeroedTo records that the ring space below pos is zero. Called by the
// drainer after zeroing, before producers may reuse the space.
func (r *File) zeroedTo(pos uint64) {
	s := r.st
	s.zeroed = pos
	r.publish(s)
}

// reset zeroes every ring page that is not zero and publishes an empty
// state. The state switch comes last: until then the old state's scan finds
// nothing that was not replayed already (see recover).
func (r *File) reset() {
	ring := r.ring()
	const page = 4096
	for off := 0; off < len(ring); off += page {
		p := ring[off:min(off+page, len(ring))]
		if !isZero(p) {
			clear(p)
		}
	}
	r.publish(r.emptyState())
}

// asideName returns an unused name path.corrupt-<time>.
func asideName(path string) string {
	stem := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000")
	name := stem
	for i := 1; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", stem, i)
	}
}

// copyAside copies the mapped file to an unused .corrupt-<time> name.
func (r *File) copyAside() (string, error) {
	name := asideName(r.path)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(r.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// Options is what Open needs: the file, the ring's layout and numbering
// (the bus's, which the file persists but does not define), and the output
// recovery replays to.
type Options struct {
	Path     string // the ring file, created if missing
	Capacity uint64 // the ring's size: a power of two in [MinCapacity, MaxCapacity]
	MaxBatch int    // most records replayed per write

	Layout Layout // how the bus's header words read

	// Numbering numbers replayed records as the bus's drainer does; nil if
	// the bus has none (a file whose records carry numbers is then not
	// trusted). Room is the headroom, in bytes, numbered records start
	// with (left out of their checksum). Run is the numbering the file
	// persists from the end of recovery on (Format 0: none).
	Numbering Numbering
	Room      int
	Run       Run

	// The output (SetOutput sets them all): Write writes records in order;
	// Sync syncs it after a replay (nil, or an answer nil where it cannot
	// be synced); Settle, if the output set a torn tail aside when it was
	// opened, is told the record replay writes again first (nil: none).
	// Position, Cut and Read report where the output ends, cut back a torn
	// record and read it back (each nil where unknown or impossible).
	Write    func(recs [][]byte) error
	Sync     func() error
	Settle   func(rec []byte)
	Position func() (Position, error)
	Cut      Cutter
	Read     Reader

	Warn func(error) // receives *Error warnings; never nil
}

// Run is a numbering's identity as the file keeps it.
type Run struct {
	Format uint8  // the bus's numbering format; 0: no numbers
	ID     string // RunIDLen bytes
}

// Result says what Open's recovery replayed.
type Result struct {
	Recovered   uint64 // records replayed
	Unrecovered uint64 // oversize records lost (their bytes were on the heap)
}

// Open opens, locks and maps the ring file, replays what it holds to the
// output, and returns it empty and sized for o.Capacity.
func Open(o Options) (*File, Result, error) {
	r, res, err := openRing(&o)
	return r, Result{Recovered: res.recovered, Unrecovered: res.unrecovered}, err
}

// openRing is Open, with all recovery found.
func openRing(o *Options) (*File, recoveryResult, error) {
	path, capacity, warn := o.Path, o.Capacity, o.Warn
	r, err := openRingFile(path, capacity, o)
	if err != nil {
		return nil, recoveryResult{}, err
	}
	res, err := r.recover()
	if err != nil {
		r.close()
		return nil, res, fmt.Errorf("asyncbus: replaying ring file %s: %w", path, err)
	}
	if res.suspects > 0 {
		aside, cerr := r.copyAside()
		reason := fmt.Sprintf("%s (bad checksum or length) not replayed; %s replayed", plural.Count(res.suspects, "damaged entry was", "damaged entries were"), plural.Count(res.recovered, "valid record was", "valid records were"))
		if cerr != nil {
			reason += "; could not keep a copy: " + cerr.Error()
		}
		warn(&Error{Path: path, Reason: reason, Aside: aside})
	}
	if res.unrecovered > 0 {
		warn(&Error{Path: path, Reason: fmt.Sprintf("%s accepted before the crash lost (oversize records are not kept in the ring file)", plural.Count(res.unrecovered, "oversize record was", "oversize records were"))})
	}
	if res.torn {
		warn(&Error{Path: path, Reason: "the output ends in part of a record (or of the drop marker in front of it) torn by the crash and could not be cut back (not a regular file, changed since, or not readable); that record is written again, whole, after the fragment"})
	}
	if res.foreign {
		first := ""
		if res.foreignNext != nil {
			first = fmt.Sprintf(" (%q)", res.foreignNext)
		}
		warn(&Error{Path: path, Reason: fmt.Sprintf("the output holds other bytes where the batch being written at the crash belonged (something else wrote to it): "+
			"%d of its %s there and not written again; the other %d replayed from the first one not found%s: "+
			"rather written twice than lost, so any of them already in the output after those bytes now appears twice",
			res.foreignFrom, plural.Count(res.foreignOf, "record was", "records were"), res.foreignOf-res.foreignFrom, first)})
	}
	if res.cutMarker {
		warn(&Error{Path: path, Reason: "the crash tore the drop marker in front of the batch being written; the fragment was cut from the output, so that gap is not marked there (the records were replayed)"})
	}
	if res.replayedAll {
		why := "the output's position is unknown"
		if res.unread {
			why = "the output could not be read back to check which of its records it holds"
		}
		warn(&Error{Path: path, Reason: fmt.Sprintf("the batch being written at the crash was replayed whole (%s): up to %s may appear twice", why, plural.Count(res.flight, "record", "records"))})
	}
	r.seq = nil
	if o.Run.Format != 0 {
		r.seq = &numbering{format: o.Run.Format, run: o.Run.ID, next: 1} // from now on the file persists the bus's numbering
	}
	r.reset()
	if r.version != ringVersion && r.capacity == capacity {
		r.initHeader() // empty now: rewritten in this build's version
	}
	if r.capacity != capacity {
		if err := r.resize(capacity); err != nil {
			r.close()
			return nil, res, err
		}
	}
	return r, res, nil
}

// outputHooks returns how recovery finds where the output ends
// (Options.Position), reads it back (Read) and cuts a torn record off
// (Cut): f's own for an *os.File on a regular file; by path for a file
// output known by its path (no cutter: such an output repairs its own
// tail when it is opened); nils for anything else.
func outputHooks(f *os.File, path string) (func() (Position, error), Reader, Cutter) {
	switch {
	case f != nil:
		return FilePosition(f), FileReader(f), FileCutter(f)
	case path != "":
		return func() (Position, error) { return PathPosition(path) }, PathReader(path), nil
	}
	return nil, nil, nil
}
