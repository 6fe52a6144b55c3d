package encode

// The no-repeat proofs of Options.UniqueKeys on JSON, cheaper than the
// full scan (uniqueJSON): the keys the fast path notes as it writes a
// record, checked against a template of the Encoder's fixed keys
// (recordKeys, uniqueTemplate); failing that, one flat pass over the line
// as this package writes it (quickUniqueJSON).

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"math"
	"math/bits"
	"slices"
)

const (
	// quickDepth bounds the containers quickUniqueJSON keeps open; a
	// deeper line goes to the full scan.
	quickDepth = 16
	// quickKeys bounds the keys of the open objects quickUniqueJSON
	// remembers; more go to the full scan.
	quickKeys = 32
)

// quickDelim marks the bytes that end a number, true, false or null, as
// scanJSON ends them.
var quickDelim = [256]bool{',': true, '}': true, ']': true, ' ': true}

// quickScan is quickUniqueJSON's state: the open containers and the keys
// of the open objects, b[keys[i][0]:keys[i][1]].
type quickScan struct {
	bloom [quickDepth]uint64 // per open object: the keyBit of each key
	first [quickDepth]int8   // per open container: its first key in keys; -1 for an array
	keys  [quickKeys][2]int32
	nkeys int8
	depth int // open containers
}

// quickUniqueJSON reports whether the JSON value b[p:end] is proven to hold
// no object with a key twice. It reads the compact JSON this package
// writes (no spaces, keys without escapes); on anything else, on a repeat
// and past its bounds it reports false, and the caller runs the full scan,
// which then decides. It allocates nothing.
func quickUniqueJSON(b []byte, p, end int) bool {
	var s quickScan
	return s.scan(b, p, end, false)
}

// scan is quickUniqueJSON on s. With open, b[p:end] may also stop right
// after a value or an object's '{' with containers still open (the start
// of a line): s then holds them and their keys.
func (s *quickScan) scan(b []byte, p, end int, open bool) bool {
	if end > math.MaxInt32 || end > len(b) {
		return false // key positions are kept as int32
	}
	for {
		// A value starts at b[p].
		if p >= end {
			return false
		}
		switch b[p] {
		case '{', '[':
			if s.depth == quickDepth {
				return false
			}
			obj := b[p] == '{'
			s.first[s.depth], s.bloom[s.depth] = -1, 0
			if obj {
				s.first[s.depth] = s.nkeys
			}
			s.depth++
			p++
			switch {
			case p == end && open && obj:
				return true
			case p < end && (b[p] == '}' && obj || b[p] == ']' && !obj):
				p = s.close(p)
			case obj:
				if p = s.key(b, p, end); p < 0 {
					return false
				}
				continue
			default:
				continue
			}
		case '"':
			if p = quickString(b, p, end); p < 0 {
				return false
			}
		default:
			q := p
			for q < end && !quickDelim[b[q]] {
				q++
			}
			if q == p {
				return false
			}
			p = q
		}
		if p = s.afterValue(b, p, end); p < 0 {
			return p == quickDone || p == quickOpen && open
		}
	}
}

// afterValue's results other than the start of the next value.
const (
	quickFail = -1 - iota // not the JSON quickUniqueJSON reads, or a repeat
	quickDone             // the outermost value is closed
	quickOpen             // b ended after a value, containers still open
)

// afterValue reads what follows a value that ends at b[p]: closing
// brackets, then a ',' and, in an object, the next key. It returns where
// the next value starts, or one of quickFail, quickDone and quickOpen.
func (s *quickScan) afterValue(b []byte, p, end int) int {
	for {
		if s.depth == 0 {
			return quickDone // the whole value, as scanJSON ends it
		}
		if p >= end {
			return quickOpen
		}
		obj := s.first[s.depth-1] >= 0
		switch c := b[p]; {
		case c == ',' && obj:
			if p = s.key(b, p+1, end); p < 0 {
				return quickFail
			}
			return p
		case c == ',':
			return p + 1
		case c == '}' && obj, c == ']' && !obj:
			p = s.close(p)
		default:
			return quickFail
		}
	}
}

// close closes the innermost container, whose closing bracket is at b[p],
// and returns the index after it.
func (s *quickScan) close(p int) int {
	s.depth--
	if f := s.first[s.depth]; f >= 0 {
		s.nkeys = f // its keys are done with
	}
	return p + 1
}

// key reads the key at b[p] of the innermost object and its ':', and
// returns where its value starts, or -1 if the key is escaped, repeated,
// one too many or not followed by ':'.
func (s *quickScan) key(b []byte, p, end int) int {
	if p >= end || b[p] != '"' {
		return -1
	}
	ks := p + 1
	q := quoteOrBackslash(b, ks, end)
	if q+1 >= end || b[q] != '"' || b[q+1] != ':' || int(s.nkeys) == quickKeys {
		return -1 // an escaped key (the full scan compares decoded keys), or not JSON
	}
	d := s.depth - 1
	if bit := keyBit(b[ks:q]); s.bloom[d]&bit == 0 {
		s.bloom[d] |= bit
	} else {
		for _, k := range s.keys[s.first[d]:s.nkeys] {
			if bytes.Equal(b[k[0]:k[1]], b[ks:q]) {
				return -1 // a repeat: the full scan finds it again and rewrites
			}
		}
	}
	s.keys[s.nkeys] = [2]int32{int32(ks), int32(q)}
	s.nkeys++
	return q + 2
}

// quoteOrBackslash returns the index of the first '"' or '\\' in b[q:end],
// or end: eight bytes a step, then byte by byte.
func quoteOrBackslash(b []byte, q, end int) int {
	for ; q+8 <= end; q += 8 {
		x := binary.LittleEndian.Uint64(b[q:])
		// The lowest marked byte is exact (hasByte's false positives lie
		// above a true match).
		if m := hasByte(x, '"') | hasByte(x, '\\'); m != 0 {
			return q + bits.TrailingZeros64(m)>>3
		}
	}
	for q < end && b[q] != '"' && b[q] != '\\' {
		q++
	}
	return q
}

// quickString returns the index after the closing quote of the string at
// b[p], or -1 if it is not closed before end.
func quickString(b []byte, p, end int) int {
	for q := p + 1; ; q += 2 {
		if q = quoteOrBackslash(b, q, end); q >= end {
			return -1
		}
		if b[q] == '"' {
			return q + 1
		}
		// A backslash: it and the byte it escapes are skipped.
	}
}

// keyBit is a key's bit in a 64-bit filter: its length and its first and
// last bytes tell most keys apart; the keys it does not are compared.
func keyBit(key []byte) uint64 {
	h := uint(len(key))
	if h > 0 {
		h += uint(key[0]) + 3*uint(key[len(key)-1])
	}
	return 1 << (h & 63)
}

// uniqueTemplate holds the keys of the fixed part of an Encoder's JSON line
// (the built-in fields, the logger name, the WithAttrs/WithGroup state and
// the record's groups), so that a record whose attributes are scalars is
// proven free of repeats from its keys alone, without scanning its line.
type uniqueTemplate struct {
	text string // the fixed part with placeholder values; keys are spans of it
	// levels are the line's top-level object and the object the record's
	// attributes go in (the same when no group is open).
	levels     [2]templateLevel
	innerIsTop bool
}

// templateLevel is the keys of one object of a template.
type templateLevel struct {
	bloom uint64     // keyBit of every key
	keys  [][2]int32 // spans of the text
}

// fullSource is a source with every field set, so that the template holds
// every source key a line may have.
var fullSource = slog.Source{Function: "f", File: "f", Line: 1}

// newUniqueTemplate returns e's template, or nil when e's fixed part does
// not scan (a repeat in it, an escaped key, too deep): its lines are then
// always scanned. e's fast path is JSON or a preset.
func (e *Encoder) newUniqueTemplate() *uniqueTemplate {
	b := []byte(`{"time":0,"level":0,"msg":0,"source":0`) // a superset of the keys a line may hold
	if p := e.c.preset; p != nil {
		b = append(append(b[:1], p.timeTok...), '0')
		b = append(appendJSONKey(b, p.levelKey, true), '0')
		b = append(append(b, p.msgTok...), '0')
		b = p.source(append(b, p.fixed...), &fullSource)
	}
	if len(e.named) > 0 {
		b = append(append(b, ','), e.named...)
	}
	comma := true
	if len(e.pre) > 0 {
		b = append(append(b, ','), e.pre...)
		comma = e.pre[len(e.pre)-1] != '{'
	}
	if e.recGroups != "" {
		if comma {
			b = append(b, ',')
		}
		b = append(b, e.recGroups...)
	}
	t := &uniqueTemplate{text: string(b)}
	var s quickScan
	if !s.scan(b, 0, len(b), true) || s.depth == 0 {
		return nil
	}
	for i, d := range [2]int{0, s.depth - 1} {
		first, last := int(s.first[d]), int(s.nkeys)
		if d+1 < s.depth {
			last = int(s.first[d+1])
		}
		if first < 0 || last < first {
			return nil // an open array: not a line's start
		}
		t.levels[i] = templateLevel{bloom: s.bloom[d], keys: slices.Clone(s.keys[first:last])}
	}
	t.innerIsTop = s.depth == 1
	return t
}

// maxRecordKeys bounds the keys a record may add for a proof by
// recordKeys; a record with more is scanned.
const maxRecordKeys = 16

// recordKeys collects the keys the JSON fast path writes for one record's
// extra fields and attributes, in the line as they are written, to prove
// from them and a uniqueTemplate that the line holds no key twice.
type recordKeys struct {
	t     *uniqueTemplate
	bloom [2]uint64 // per template level: its keys' bits and the record's
	// spans are the record's keys in the line; level says in which object.
	spans  [maxRecordKeys][2]int32
	level  [maxRecordKeys]uint8
	n      int
	inner  uint8 // the level of the record's attributes
	failed bool  // no proof: the line is scanned
	repeat bool  // a key repeats: the line is rewritten without the flat pass
}

// newRecordKeys returns an empty recordKeys for a line of t's Encoder.
func newRecordKeys(t *uniqueTemplate) recordKeys {
	k := recordKeys{t: t, bloom: [2]uint64{t.levels[0].bloom, t.levels[1].bloom}, inner: 1}
	if t.innerIsTop {
		k.inner, k.bloom[1] = 0, 0
	}
	return k
}

// proven reports whether the line is proven to hold no key twice.
func (k *recordKeys) proven() bool { return !k.failed }

// fail records that an attribute was written that the proof does not cover
// (a value other than a scalar, whose keys only a scan sees).
func (k *recordKeys) fail() { k.failed = true }

// note records the key of a scalar attribute just written to b: its
// opening quote is at b[ks], and the attribute's key has n bytes; l is its
// object (0, the top level, for the extra fields; k.inner for the record's
// attributes). The encoded key is compared, so that keys that JSON writes
// alike (invalid UTF-8) are one key.
func (k *recordKeys) note(b []byte, ks, n int, l uint8) {
	q := ks + 1 + n
	// b[q] closes the key when the key was written as its n bytes: a '"'
	// inside a JSON string follows a backslash.
	if q >= len(b) || b[q] != '"' || b[q-1] == '\\' || k.n == maxRecordKeys || q > math.MaxInt32 {
		k.failed = true // an escaped key or too many keys: scanned
		return
	}
	bit := keyBit(b[ks+1 : q])
	if k.bloom[l]&bit != 0 && k.repeats(b, b[ks+1:q], l) {
		k.failed, k.repeat = true, true // the line is rewritten
		return
	}
	k.bloom[l] |= bit
	k.spans[k.n] = [2]int32{int32(ks + 1), int32(q)}
	k.level[k.n] = l
	k.n++
}

// repeats reports whether key is already in object l: in the template or
// among the record's keys.
func (k *recordKeys) repeats(b, key []byte, l uint8) bool {
	t := k.t
	for _, s := range t.levels[l].keys {
		if t.text[s[0]:s[1]] == string(key) {
			return true
		}
	}
	for i := range k.n {
		if s := k.spans[i]; k.level[i] == l && bytes.Equal(b[s[0]:s[1]], key) {
			return true
		}
	}
	return false
}
