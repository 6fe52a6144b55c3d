package bus

// The durable ring: the bus's ring in a memory-mapped file (Config.RingFile).
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
// # File format (version 1, little-endian)
//
//	offset 0     magic "ABUSRING"
//	offset 8     version uint32 (1)
//	offset 12    header size uint32 (4096; the ring starts there)
//	offset 16    capacity uint64 (a power of two; file size = 4096 + capacity)
//	offset 24    CRC-32C of bytes 0..23, uint32
//	offset 64    state slot 0 (64 bytes)
//	offset 128   state slot 1 (64 bytes)
//	offset 192   generation uint64: the current state is slot generation&1
//	offset 4096  the ring: capacity bytes, the layout of package async
//
// A state slot holds the drainer's cursors: head (everything below it has
// been written to the sink), zeroed (everything below it has been zeroed),
// and the batch being written: end (its end; end == head when no write is
// in flight), pre (bytes of a drop marker written in front of its records),
// and the sink's position before it (size, -1 if unknown, and the device and
// inode of the output), followed by a CRC-32C of those seven words. The
// drainer publishes a new state by filling the slot that is not current and
// then storing generation+1: the generation word is a single aligned 8-byte
// store, so a crash at any instant leaves either the old state or the new one,
// never a mix.
//
// # Record checksums
//
// In a file-backed ring the producer puts a 29-bit checksum (CRC-32C of the
// payload seeded with its length, truncated) in the spare bits 32..60 of the
// header word it commits with its one atomic store, so the commit stays a
// single store and readers that mask the length with lenMask are unaffected.
// Recovery replays a record only if its checksum matches.
//
// # Ordering (drainer)
//
// For each batch: publish {end: batch end, sink position now}; write to the
// sink; publish {head: batch end}; zero the consumed ring space; publish
// {zeroed: batch end}; only then publish head to producers (Bus.head). The
// sink's write system call has returned before the state that says "written"
// is stored, so a crash can never mark unwritten records as written. A crash
// during the write leaves the batch "in flight"; recovery then checks how far
// the sink got (for a file sink: its bytes after its size before the batch,
// compared with the batch's records, which are still in the ring) and
// replays the rest.
//
// # Recovery (before the bus accepts anything)
//
//  1. The in-flight batch, if any: with a known sink position, the records
//     whose bytes are in the sink where the batch put them are skipped
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
//     it is exactly that (see tornTail, fileCutter), so the record is written
//     again whole, once. A filesink.File has cut its own torn tail at open:
//     it is told the record written again first (SettleTornTail), so that
//     its repair raises no alarm for a record nothing lost.
//  2. Scan from head to zeroed+capacity (beyond that lies space the dead
//     drainer consumed but had not finished zeroing) and write every committed
//     record whose checksum matches to the sink, in ring order, in chunks that
//     follow the same in-flight protocol, so a crash during recovery is
//     recovered the same way.
//  3. Sync the sink, zero the ring and publish an empty state.
//
// Reservations that were never committed (the producer died between its CAS
// and its header store, possibly half-way through copying its record) have
// a zero header word. They are not damage and are skipped quietly: the
// record was never accepted (its Handle never returned), so it is neither
// replayed nor counted as lost (not in Stats.Unrecovered). Their length was
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
// renamed to <file>.corrupt-<time>, OnError gets a *RingFileError, and the
// bus starts with a fresh file. Nothing of it is replayed.
//
// Not durable: oversize records (longer than MaxRecord) live on the heap; only
// their 8-byte reference (with their length) is in the ring, so recovery can
// only count them (Stats.Unrecovered, and a warning). Drop markers for gaps
// that had not been written are lost too (the drops they report were never
// accepted).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// ErrRingLocked is returned (wrapped) by New when the ring file is locked by
// another process (or by another Bus in this one).
var ErrRingLocked = errors.New("ring file is in use by another process")

// ErrRingUnsupported is returned by New for Config.RingFile on platforms
// without mmap and flock.
var ErrRingUnsupported = errors.New("asyncbus: ring files are not supported on this platform")

// RingFileError reports a ring file that could not be trusted (whole or in
// part). It is passed to Config.OnError as a warning; the bus then runs with
// a fresh ring file.
type RingFileError struct {
	Path   string // the ring file
	Reason string // what was wrong with it
	Aside  string // where the damaged file was renamed or copied ("" if nowhere)
}

// Error implements error.
func (e *RingFileError) Error() string {
	s := "asyncbus: ring file " + e.Path + ": " + e.Reason
	if e.Aside != "" {
		s += "; kept as " + e.Aside
	}
	return s
}

// SinkPosition says where a file sink's output ends: the device and inode of
// the file and its size. See Config.sinkPosition.
type SinkPosition struct {
	Dev, Ino uint64
	Size     int64
}

// Ring file format constants (see the comment at the top of this file).
const (
	ringMagic       = "ABUSRING"
	ringVersion     = 1
	ringHeaderSize  = 4096
	ringStaticCRC   = 24  // offset of the CRC of the static header
	ringSlot0       = 64  // offset of state slot 0
	ringSlotSize    = 64  // 8 words: 7 state words + CRC
	ringGeneration  = 192 // offset of the generation word
	sumShift        = 32
	sumMask         = uint64(1)<<29 - 1 // bits 32..60 of a header word
	entryFlags      = flagCommit | flagPadding | flagOversize
	unknownSinkSize = -1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSum is the 29-bit checksum a durable producer puts in bits 32..60 of
// a record's header word: CRC-32C of p seeded with its length (so a prefix of
// a record never carries the record's sum), truncated to 29 bits.
func recordSum(p []byte) uint64 {
	return uint64(crc32.Update(uint32(len(p)), castagnoli, p)) & sumMask
}

// ringState is one state slot: the drainer's persisted cursors.
type ringState struct {
	head   uint64 // all records below were written to the sink
	zeroed uint64 // all ring space below was zeroed
	end    uint64 // end of the batch in flight; == head when none
	pre    uint64 // bytes written before the batch's first record (a drop marker)
	size   int64  // sink size before the batch, or unknownSinkSize
	dev    uint64 // sink device, with size
	ino    uint64 // sink inode, with size
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

// ringImage is a validated view of a ring file's bytes.
type ringImage struct {
	capacity uint64
	mask     uint64
	st       ringState
	gen      uint64
	ring     []byte
}

// errUninitialized: the header is all zero (a file created but never
// initialised, e.g. a crash right after creation).
var errUninitialized = errors.New("uninitialized")

// parseImage validates a whole ring file image. Any error means the file
// cannot be trusted at all.
func parseImage(data []byte) (*ringImage, error) {
	if len(data) < ringHeaderSize {
		return nil, fmt.Errorf("file is %d bytes, shorter than the %d-byte header", len(data), ringHeaderSize)
	}
	hdr := data[:ringHeaderSize]
	if isZero(hdr) {
		return nil, errUninitialized
	}
	if string(hdr[:8]) != ringMagic {
		return nil, fmt.Errorf("bad magic %q: not an asyncbus ring file", hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != ringVersion {
		return nil, fmt.Errorf("format version %d, this build reads version %d", v, ringVersion)
	}
	if got, want := binary.LittleEndian.Uint32(hdr[ringStaticCRC:]), crc32.Checksum(hdr[:ringStaticCRC], castagnoli); got != want {
		return nil, fmt.Errorf("header checksum %08x, want %08x", got, want)
	}
	if hs := binary.LittleEndian.Uint32(hdr[12:]); hs != ringHeaderSize {
		return nil, fmt.Errorf("header size %d, want %d", hs, ringHeaderSize)
	}
	capacity := binary.LittleEndian.Uint64(hdr[16:])
	if capacity < MinCapacity || capacity > MaxCapacity || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("capacity %d is not a power of two in [%d, %d]", capacity, MinCapacity, MaxCapacity)
	}
	if uint64(len(data)-ringHeaderSize) != capacity {
		return nil, fmt.Errorf("file is %d bytes, the header says %d", len(data), ringHeaderSize+capacity)
	}
	gen := binary.LittleEndian.Uint64(hdr[ringGeneration:])
	slot := hdr[ringSlot0+ringSlotSize*int(gen&1):][:ringSlotSize]
	var w [7]uint64
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(slot[8*i:])
	}
	if got := binary.LittleEndian.Uint64(slot[56:]); got != stateCRC(w) {
		return nil, fmt.Errorf("state checksum %08x, want %08x", got, stateCRC(w))
	}
	st := ringState{head: w[0], zeroed: w[1], end: w[2], pre: w[3], size: int64(w[4]), dev: w[5], ino: w[6]}
	// Cursors: multiples of 8 with zeroed <= head <= end <= zeroed+capacity.
	if (st.head|st.zeroed|st.end)&7 != 0 || st.zeroed > st.head || st.head > st.end ||
		st.end-st.zeroed > capacity || st.zeroed > 1<<62 {
		return nil, fmt.Errorf("cursors do not add up: head %d, zeroed %d, end %d, capacity %d", st.head, st.zeroed, st.end, capacity)
	}
	if st.size < unknownSinkSize {
		return nil, fmt.Errorf("sink size %d", st.size)
	}
	return &ringImage{capacity: capacity, mask: capacity - 1, st: st, gen: gen, ring: data[ringHeaderSize:]}, nil
}

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// entryKind is what a scanned ring entry is.
type entryKind uint8

const (
	entRecord   entryKind = iota // inline record: data is its payload
	entOversize                  // reference to a heap record (not durable); size is its length
	entPadding                   // wrap padding
)

type ringEntry struct {
	pos, end uint64 // ring positions of the entry
	kind     entryKind
	data     []byte // entRecord: the payload (aliases the image)
	size     uint64 // payload bytes the drainer writes for it (entOversize: lenMask = unknown)
}

// next returns the first valid entry at or after pos and ending at or before
// limit, and how many damaged entries it skipped. pos must be an entry
// boundary: head, or the end of an entry next returned.
//
// Entries are contiguous, so the word at a boundary is a header: zero (a
// reservation never committed, or free space) or a committed header. A
// committed-looking word there that is not a valid entry is damage, counted
// once. Past a zero header the scan is inside a dead reservation, whose
// length nobody recorded: it steps word by word through the payload the
// dead producer had copied (any bytes, e.g. UTF-8 text whose words have the
// top bit set) until the next valid entry, and none of those words is damage,
// whatever they look like. A damaged header is likewise counted once, not
// once per word of its payload.
func (im *ringImage) next(pos, limit uint64) (e ringEntry, damaged int, ok bool) {
	boundary := true // pos is where an entry starts
	for ; pos < limit; pos, boundary = pos+8, false {
		off := pos & im.mask
		w := binary.LittleEndian.Uint64(im.ring[off:])
		if w&flagCommit == 0 {
			continue // free space, a reservation never committed, or its payload
		}
		n := w & lenMask
		sum := (w >> sumShift) & sumMask
		switch w & entryFlags {
		case flagCommit | flagPadding:
			if sum == 0 && n == im.capacity-off && n <= limit-pos {
				return ringEntry{pos: pos, end: pos + n, kind: entPadding}, damaged, true
			}
		case flagCommit | flagOversize:
			if sum == 0 && limit-pos >= hdrSize {
				return ringEntry{pos: pos, end: pos + hdrSize, kind: entOversize, size: n}, damaged, true
			}
		case flagCommit:
			need := align8(hdrSize + n)
			if n <= maxInline && need <= im.capacity-off && need <= limit-pos {
				p := im.ring[off+hdrSize : off+hdrSize+n]
				if recordSum(p) == sum {
					return ringEntry{pos: pos, end: pos + need, kind: entRecord, data: p, size: n}, damaged, true
				}
			}
		}
		if boundary {
			damaged++
		}
	}
	return ringEntry{}, damaged, false
}

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

// sinkReader reads a file output back for recovery: it fills b with the
// bytes at off of the output now at now and reports whether it could (all
// of b). A descriptor-based reader reads the file the descriptor is open on.
type sinkReader func(now SinkPosition, off int64, b []byte) bool

// flightDone returns how many leading entries of the interrupted batch ents
// (the valid entries in [st.head, st.end)) are wholly in the sink, given
// where the sink ends now, and how the sink goes on after them (see
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
func flightDone(ents []ringEntry, st ringState, now SinkPosition, nowErr error, read sinkReader) (j int, end flightEnd) {
	if st.size == unknownSinkSize || nowErr != nil || now.Size < 0 {
		return 0, flightUnknown
	}
	base := st.size
	if now.Dev != st.dev || now.Ino != st.ino {
		base = 0 // the sink switched files (rotation) at the start of the batch
	}
	pos := base + int64(st.pre) // where entry i's bytes begin in the output
	switch {
	case now.Size == base:
		return 0, flightExact // nothing written, not even the marker
	case now.Size < base:
		return 0, flightUnknown // the sink shrank
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
			if e.size == lenMask {
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
		k, runLen := i, int64(0)
		for ; k < len(ents) && ents[k].kind != entOversize; k++ {
			if k > i && runLen+int64(ents[k].size) > flightReadChunk {
				break
			}
			runLen += int64(ents[k].size) // padding: 0
		}
		n := min(runLen, now.Size-pos)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		got := buf[:n]
		if n > 0 && (read == nil || !read(now, pos, got)) {
			return 0, flightUnread
		}
		for ; i < k; i++ {
			d := ents[i].data // padding: nil
			if len(got) >= len(d) && bytes.Equal(got[:len(d)], d) {
				if len(d) > 0 {
					unchecked = -1 // its bytes follow the oversize ones before it
				}
				got, pos = got[len(d):], pos+int64(len(d))
				continue
			}
			// got is shorter than d only where the output ends (n < runLen).
			if len(got) < len(d) && bytes.HasPrefix(d, got) {
				if len(got) == 0 {
					return i, flightExact // ends where it begins
				}
				return i, flightTorn
			}
			if unchecked >= 0 {
				return unchecked, flightForeign // the oversize bytes were not ours either
			}
			return i, flightForeign
		}
	}
	if unchecked >= 0 && pos < now.Size {
		// More bytes after oversize records that no checked record follows:
		// whether those bytes were ours cannot be told.
		return unchecked, flightForeign
	}
	return len(ents), flightExact
}

// tornTail locates a record torn by the crash in a file output: when the
// output is still the file the interrupted batch went to (same device and
// inode) and ends inside the batch's drop marker (idx -1) or inside entry
// idx, it returns where the last whole record ends (cut) and how many bytes
// of the torn piece follow it (frag, > 0). ok is false in every other case.
func tornTail(ents []ringEntry, st ringState, now SinkPosition) (cut int64, idx int, frag int64, ok bool) {
	if st.size == unknownSinkSize || now.Dev != st.dev || now.Ino != st.ino || now.Size <= st.size {
		return 0, 0, 0, false
	}
	rem := now.Size - st.size
	if rem < int64(st.pre) {
		return st.size, -1, rem, true // inside the marker
	}
	at := st.size + int64(st.pre)
	rem -= int64(st.pre)
	for i, e := range ents {
		if e.kind == entOversize && e.size == lenMask {
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

// SinkCutter cuts a file output back to the end of its last whole record,
// removing a record's beginning that a crash left at its end: cut, after
// checking that the output is still at now (device, inode, size) and that
// fragment accepts the bytes from at to its end. It reports whether it cut.
type sinkCutter func(at int64, now SinkPosition, fragment func([]byte) bool) bool

// tornTailSettler is a sink that set aside a torn tail when it was opened and
// holds the report until it knows whether a replay writes that record again
// (filesink.File). The bus calls SettleTornTail once before its first write:
// with the record a durable ring's recovery is about to write again, whole,
// because the crash interrupted its write, or with nil.
type tornTailSettler interface {
	SettleTornTail(rec []byte)
}

// settleTornTail tells a sink that holds a torn-tail report that no replay
// covers it (called by New after any replay; once settled, later calls do
// nothing).
func settleTornTail(w io.Writer) {
	if s, ok := w.(tornTailSettler); ok {
		s.SettleTornTail(nil)
	}
}

// ringFile is an open, locked, mapped ring file (see ringfile_unix.go).
type ringFile struct {
	path     string
	f        *os.File
	data     []byte // the whole mapping
	capacity uint64
	st       ringState // the current state (drainer-private after New)
	gen      uint64
	pos      func() (SinkPosition, error) // nil: unknown
	cut      sinkCutter                   // nil: the output cannot be cut back
	read     sinkReader                   // nil: the output cannot be read back
}

// ring returns the ring region of the mapping.
func (r *ringFile) ring() []byte { return r.data[ringHeaderSize : ringHeaderSize+r.capacity] }

// word returns a pointer to the 8-byte word at header offset off.
// unsafe: the mapping is page-aligned and off is a multiple of 8 inside the
// header page, so the pointer is aligned and in bounds; r.data keeps the
// mapping referenced until close.
func (r *ringFile) word(off int) *uint64 {
	return (*uint64)(unsafe.Pointer(&r.data[off]))
}

// publish makes s the current state: it fills the slot that is not current,
// then flips the generation. Each store is atomic (a single aligned 8-byte
// write that the compiler may neither split nor move), and the generation is
// stored last, so a crash between any two stores leaves the old state or s.
func (r *ringFile) publish(s ringState) {
	w := s.words()
	slot := ringSlot0 + ringSlotSize*int((r.gen+1)&1)
	for i, v := range w {
		atomic.StoreUint64(r.word(slot+8*i), v)
	}
	atomic.StoreUint64(r.word(slot+56), stateCRC(w))
	r.gen++
	atomic.StoreUint64(r.word(ringGeneration), r.gen)
	r.st = s
}

// initHeader writes a fresh header with an empty state.
func (r *ringFile) initHeader() {
	copy(r.data, staticHeader(r.capacity))
	r.gen = 0
	s := ringState{}
	w := s.words()
	for i, v := range w {
		atomic.StoreUint64(r.word(ringSlot0+8*i), v)
	}
	atomic.StoreUint64(r.word(ringSlot0+56), stateCRC(w))
	atomic.StoreUint64(r.word(ringGeneration), 0)
	r.st = s
}

// sinkPos returns the sink's position, or unknownSinkSize (also when the
// sink's code panicked: the position is only a hint for recovery).
func (r *ringFile) sinkPos() (size int64, dev, ino uint64) {
	if r.pos == nil {
		return unknownSinkSize, 0, 0
	}
	defer func() {
		if recover() != nil {
			size, dev, ino = unknownSinkSize, 0, 0
		}
	}()
	p, err := r.pos()
	if err != nil || p.Size < 0 {
		return unknownSinkSize, 0, 0
	}
	return p.Size, p.Dev, p.Ino
}

// begin records that the batch ending at end (with pre bytes of marker in
// front) is about to be written. Called by the drainer before the write.
func (r *ringFile) begin(end uint64, pre int) {
	s := r.st
	s.end, s.pre = end, uint64(pre)
	s.size, s.dev, s.ino = r.sinkPos()
	r.publish(s)
}

// written records that everything below pos is in the sink. Called by the
// drainer after the sink's write returned, before the space is zeroed.
func (r *ringFile) written(pos uint64) {
	s := r.st
	s.head, s.end, s.pre = pos, pos, 0
	r.publish(s)
}

// zeroedTo records that the ring space below pos is zero. Called by the
// drainer after zeroing, before producers may reuse the space.
func (r *ringFile) zeroedTo(pos uint64) {
	s := r.st
	s.zeroed = pos
	r.publish(s)
}

// recoveryResult is what recover did.
type recoveryResult struct {
	recovered   uint64 // records replayed
	unrecovered uint64 // oversize references found (their bytes were on the heap)
	suspects    int    // damaged entries: invalid headers at entry boundaries (see next)
	replayedAll bool   // an in-flight batch was replayed whole: it may appear twice
	unread      bool   // ... because the output could not be read back
	flight      int    // records in that batch
	torn        bool   // the sink ended inside a record of the in-flight batch
	cutMarker   bool   // the sink ended inside the batch's drop marker, which was cut
	foreign     bool   // the sink held other bytes where a record of the batch belonged
	foreignFrom int    // records of that batch found in the sink (not replayed)
	foreignOf   int    // records in that batch
	foreignNext []byte // the beginning of the first record replayed then
}

// recover replays the committed records the file holds to w (see the
// comment at the top of this file) and resets the ring. It returns an error
// only if the sink failed; the file then still holds what was not written.
func (r *ringFile) recover(w io.Writer, maxBatch int) (recoveryResult, error) {
	var res recoveryResult
	im := &ringImage{capacity: r.capacity, mask: r.capacity - 1, st: r.st, ring: r.ring()}
	limit := r.st.zeroed + r.capacity
	head := r.st.head
	if r.st.end > head {
		var ents []ringEntry
		for pos := head; ; {
			e, sus, ok := im.next(pos, r.st.end)
			res.suspects += sus
			if !ok {
				break
			}
			ents = append(ents, e)
			pos = e.end
		}
		var now SinkPosition
		nowErr := errors.New("unknown sink position")
		if r.pos != nil {
			now, nowErr = r.pos()
		}
		j, end := flightDone(ents, r.st, now, nowErr, r.read)
		if end == flightTorn && r.cut != nil {
			// The output ends in the beginning of a record (or of the
			// marker) that the crash tore: cut it back, if it is exactly
			// that, so the record is written again whole and only once.
			if at, idx, frag, torn := tornTail(ents, r.st, now); torn {
				match := func(b []byte) bool { return int64(len(b)) == frag && bytes.IndexByte(b, '\n') < 0 }
				if idx >= 0 && ents[idx].kind == entRecord {
					want := ents[idx].data[:frag]
					match = func(b []byte) bool { return bytes.Equal(b, want) }
				}
				if r.cut(at, now, match) {
					j, end = max(idx, 0), flightExact
					res.cutMarker = idx < 0
				}
			}
		}
		if (end == flightExact || end == flightForeign) && j < len(ents) && ents[j].kind == entRecord {
			// A sink that set a torn tail aside at its own open learns which
			// record is written again first (filesink: no alarm if the
			// fragment is its beginning).
			if s, isSettler := w.(tornTailSettler); isSettler {
				s.SettleTornTail(ents[j].data)
			}
		}
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
		if j > 0 {
			head = ents[j-1].end
		}
		s := r.st
		s.head, s.end, s.pre = head, head, 0
		r.publish(s) // one atomic switch: the measurement is never applied twice
	}
	var batch [][]byte
	var buf []byte
	pos := head
	flush := func(end uint64) error {
		if len(batch) > 0 {
			r.begin(end, 0)
			err := writeAll(w, batch, &buf)
			if err != nil {
				return err
			}
			res.recovered += uint64(len(batch))
			clear(batch)
			batch = batch[:0]
		}
		r.written(end)
		return nil
	}
	for {
		e, sus, ok := im.next(pos, limit)
		res.suspects += sus
		if !ok {
			break
		}
		pos = e.end
		switch e.kind {
		case entOversize:
			if err := flush(e.pos); err != nil {
				return res, err
			}
			res.unrecovered++
			r.written(e.end)
		case entRecord:
			batch = append(batch, e.data)
			if len(batch) >= maxBatch {
				if err := flush(e.end); err != nil {
					return res, err
				}
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(pos); err != nil {
			return res, err
		}
	}
	if res.recovered > 0 {
		if s, ok := w.(Syncer); ok {
			if err := sinkSync(s); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
				return res, fmt.Errorf("asyncbus: sync after replaying the ring file: %w", err)
			}
		}
	}
	return res, nil
}

// writeAll writes recs to w in order: one WriteBatch loop for a BatchWriter,
// one Write of the concatenation otherwise.
func writeAll(w io.Writer, recs [][]byte, buf *[]byte) error {
	if bw, ok := w.(BatchWriter); ok {
		for len(recs) > 0 {
			n, err := sinkWriteBatch(bw, recs)
			n = max(0, min(n, len(recs)))
			recs = recs[n:]
			if err != nil {
				return err
			}
			if n == 0 {
				return io.ErrShortWrite
			}
		}
		return nil
	}
	b := (*buf)[:0]
	for _, r := range recs {
		b = append(b, r...)
	}
	*buf = b
	if len(b) == 0 {
		return nil
	}
	n, err := sinkWrite(w, b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

// reset zeroes every ring page that is not zero and publishes an empty
// state. The state switch comes last: until then the old state's scan finds
// nothing that was not replayed already (see recover).
func (r *ringFile) reset() {
	ring := r.ring()
	const page = 4096
	for off := 0; off < len(ring); off += page {
		p := ring[off:min(off+page, len(ring))]
		if !isZero(p) {
			clear(p)
		}
	}
	r.publish(ringState{})
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
func (r *ringFile) copyAside() (string, error) {
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

// openRing opens, locks and maps the ring file, replays what it holds to w,
// and returns it reset and sized for capacity. warn receives
// *RingFileError warnings; res says what was replayed.
func openRing(path string, capacity uint64, w io.Writer, pos func() (SinkPosition, error), cut sinkCutter, read sinkReader, maxBatch int, warn func(error)) (*ringFile, recoveryResult, error) {
	r, err := openRingFile(path, capacity, warn)
	if err != nil {
		return nil, recoveryResult{}, err
	}
	r.pos, r.cut, r.read = pos, cut, read
	res, err := r.recover(w, maxBatch)
	if err != nil {
		r.close()
		return nil, res, fmt.Errorf("asyncbus: replaying ring file %s: %w", path, err)
	}
	if res.suspects > 0 {
		aside, cerr := r.copyAside()
		reason := fmt.Sprintf("%d damaged entries (bad checksum or length) were not replayed; %d valid records were", res.suspects, res.recovered)
		if cerr != nil {
			reason += "; could not keep a copy: " + cerr.Error()
		}
		warn(&RingFileError{Path: path, Reason: reason, Aside: aside})
	}
	if res.unrecovered > 0 {
		warn(&RingFileError{Path: path, Reason: fmt.Sprintf("%d oversize records accepted before the crash were lost (oversize records are not kept in the ring file)", res.unrecovered)})
	}
	if res.torn {
		warn(&RingFileError{Path: path, Reason: "the output ends in part of a record (or of the drop marker in front of it) torn by the crash and could not be cut back (not a regular file, changed since, or not readable); that record is written again, whole, after the fragment"})
	}
	if res.foreign {
		first := ""
		if res.foreignNext != nil {
			first = fmt.Sprintf(" (%q)", res.foreignNext)
		}
		warn(&RingFileError{Path: path, Reason: fmt.Sprintf("the output holds other bytes where the batch being written at the crash belonged (something else wrote to it): "+
			"%d of its %d records were there and were not written again; the other %d were replayed from the first one not found%s: "+
			"rather written twice than lost, so any of them already in the output after those bytes now appears twice",
			res.foreignFrom, res.foreignOf, res.foreignOf-res.foreignFrom, first)})
	}
	if res.cutMarker {
		warn(&RingFileError{Path: path, Reason: "the crash tore the drop marker in front of the batch being written; the fragment was cut from the output, so that gap is not marked there (the records were replayed)"})
	}
	if res.replayedAll {
		why := "the output's position is unknown"
		if res.unread {
			why = "the output could not be read back to check which of its records it holds"
		}
		warn(&RingFileError{Path: path, Reason: fmt.Sprintf("the batch being written at the crash was replayed whole (%s): up to %d records may appear twice", why, res.flight)})
	}
	r.reset()
	if r.capacity != capacity {
		if err := r.resize(capacity); err != nil {
			r.close()
			return nil, res, err
		}
	}
	return r, res, nil
}

// sinkPositionOf returns the position function New uses by default: for an
// *os.File on a regular file, fstat; for a writer with a Path() string
// method (filesink.File), stat of that path; otherwise nil (unknown).
func sinkPositionOf(w io.Writer) func() (SinkPosition, error) {
	switch s := w.(type) {
	case *os.File:
		return filePosition(s)
	case interface{ Path() string }:
		if strings.TrimSpace(s.Path()) == "" {
			return nil
		}
		return func() (SinkPosition, error) { return pathPosition(s.Path()) }
	}
	return nil
}

// sinkReaderOf returns the reader recovery uses to check which records of an
// interrupted batch are in the output: for an *os.File on a regular file,
// fileReader; for a writer with a Path() string method (filesink.File),
// pathReader; otherwise nil (the output cannot be read back).
func sinkReaderOf(w io.Writer) sinkReader {
	switch s := w.(type) {
	case *os.File:
		return fileReader(s)
	case interface{ Path() string }:
		p, ok := sinkPath(s)
		if !ok || strings.TrimSpace(p) == "" {
			return nil
		}
		return pathReader(p)
	}
	return nil
}

// sinkCutterOf returns the cutter New uses: for an *os.File on a regular
// file, fileCutter; otherwise nil (a filesink.File repairs its own tail when
// it is opened; other writers cannot be cut).
func sinkCutterOf(w io.Writer) sinkCutter {
	if f, ok := w.(*os.File); ok {
		return fileCutter(f)
	}
	return nil
}

// openRing maps cfg.RingFile as the ring of b, after replaying what it holds
// to the sink (New calls it before the drainer starts, so nothing new can be
// accepted before the replay is done).
func (b *Bus) openRing(cfg Config) error {
	pos, cut := cfg.sinkPosition, sinkCutter(nil)
	if pos == nil {
		pos, cut = sinkPositionOf(b.w), sinkCutterOf(b.w)
	}
	// The bytes are read from the output itself, also where a test reports
	// its position (for a copy standing for the file that crashed).
	read := sinkReaderOf(b.w)
	warn := func(err error) {
		if b.onError == nil {
			return
		}
		defer func() { _ = recover() }() // a panicking callback must not fail New
		b.onError(err)
	}
	r, res, err := openRing(cfg.RingFile, b.capacity, b.w, pos, cut, read, b.maxBatch, warn)
	if err != nil {
		return err
	}
	b.ring = r
	b.mem = r.ring()
	b.base = unsafe.Pointer(&b.mem[0]) // page-aligned mapping: 8-byte aligned
	b.recovered, b.unrecovered = res.recovered, res.unrecovered
	return nil
}
