// Attribute keys: each key once per level, and a record's error as the
// semantic conventions' exception.* attributes.

package otlpsink

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
)

// kvSpan locates one encoded KeyValue element of a list: the element
// [start, end) and its key's bytes [key, keyEnd); src is the element whose
// bytes are written at this one's position and skip marks a repeated key.
type kvSpan struct {
	start, end, key, keyEnd int
	src                     int
	skip                    bool
}

// smallList is how many elements uniqueKeys compares pairwise, in an array
// on the stack; longer lists are sorted in reused scratch space.
const smallList = 16

// dedupScratch is the scratch space of uniqueKeys for long lists.
type dedupScratch struct {
	spans []kvSpan
	order []int
}

// spareScratch holds one dedupScratch between long lists. Swap hands it to
// exactly one caller (a concurrent one finds nil and makes its own), and
// Store puts back the one just used: plain exclusive ownership, with no
// sync.Pool, whose items the race detector drops at random.
var spareScratch atomic.Pointer[dedupScratch]

// uniqueKeys rewrites the KeyValue elements in dst[start:] (all written by
// this package: one tag byte, the length, the key first) so that each key
// appears once: at its first position, with its last value, as the OTel
// SDK's Record.AddAttributes keeps a repeated attribute. It allocates
// nothing unless a key repeats, and then only if dst must grow.
func uniqueKeys(dst []byte, start int) []byte {
	if len(dst)-start < 8 { // room for at most one element with a key
		return dst
	}
	if !mayRepeat(dst, start) {
		return dst // the common case: no key repeats (or not written here)
	}
	var stack [smallList]kvSpan
	spans, ok := collectKVs(dst, start, stack[:0:smallList])
	if !ok {
		return dst // not written here: leave it
	}
	if spans != nil {
		return dedupSpans(dst, start, spans, nil)
	}
	// A long list: collected again into the reused scratch.
	scratch := spareScratch.Swap(nil)
	if scratch == nil {
		scratch = new(dedupScratch)
	}
	long, _ := collectKVs(dst, start, scratch.spans[:0])
	dst = dedupSpans(dst, start, long, scratch)
	scratch.spans = long[:0] // the grown array serves the next long list
	spareScratch.Store(scratch)
	return dst
}

// mayRepeat reports whether a key of the elements of dst[start:] may
// repeat: each key sets one of 128 bits by a hash of its bytes, and only a
// bit set twice (a repeated key, or two keys that share a bit) sends the
// list through the exact comparison. It reports false for a list this
// package did not write.
func mayRepeat(dst []byte, start int) bool {
	var seen [2]uint64
	for p := start; p < len(dst); {
		s, ok := readKV(dst, p)
		if !ok {
			return false
		}
		h := uint32(2166136261) // FNV-1a
		for _, c := range dst[s.key:s.keyEnd] {
			h = (h ^ uint32(c)) * 16777619
		}
		w, bit := h>>6&1, uint64(1)<<(h&63)
		if seen[w]&bit != 0 {
			return true
		}
		seen[w] |= bit
		p = s.end
	}
	return false
}

// collectKVs appends the spans of the elements of dst[start:] to spans; it
// returns nil when they do not fit in spans's capacity and spans is
// stack[:0:smallList] (the caller then uses scratch space), and false when
// an element is not one this package wrote.
func collectKVs(dst []byte, start int, spans []kvSpan) ([]kvSpan, bool) {
	bounded := cap(spans) == smallList
	for p := start; p < len(dst); {
		s, ok := readKV(dst, p)
		if !ok {
			return nil, false
		}
		if bounded && len(spans) == smallList {
			// Keep scanning: a malformed element still leaves dst alone.
			for p = s.end; p < len(dst); {
				if s, ok = readKV(dst, p); !ok {
					return nil, false
				}
				p = s.end
			}
			return nil, true
		}
		s.src = len(spans)
		spans = append(spans, s)
		p = s.end
	}
	return spans, true
}

// dedupSpans rewrites dst[start:], whose elements are spans, with each key
// once (see uniqueKeys); scratch is nil for a short list.
func dedupSpans(dst []byte, start int, spans []kvSpan, scratch *dedupScratch) []byte {
	if len(spans) < 2 || !markRepeats(dst, spans, scratch) {
		return dst
	}
	out := len(dst)
	for _, s := range spans {
		if !s.skip {
			src := spans[s.src]
			dst = append(dst, dst[src.start:src.end]...)
		}
	}
	n := copy(dst[start:], dst[out:])
	return dst[:start+n]
}

// readKV reads the KeyValue element at dst[p:].
func readKV(dst []byte, p int) (kvSpan, bool) {
	n, w := uvarint(dst[p+1:])
	if w <= 0 || uint64(len(dst)-p-1-w) < n {
		return kvSpan{}, false
	}
	body := p + 1 + w
	end := body + int(n)
	if body >= end || dst[body] != byte(fKVKey<<3|protowire.BytesType) {
		return kvSpan{}, false
	}
	kl, kw := uvarint(dst[body+1 : end])
	if kw <= 0 || uint64(end-body-1-kw) < kl {
		return kvSpan{}, false
	}
	key := body + 1 + kw
	return kvSpan{start: p, end: end, key: key, keyEnd: key + int(kl)}, true
}

// uvarint is protowire.ConsumeVarint with the one-byte case inline.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// markRepeats marks every repeated key of spans as skipped and points its
// first occurrence at its last one; it reports whether any key repeats.
func markRepeats(dst []byte, spans []kvSpan, scratch *dedupScratch) bool {
	key := func(i int) []byte { return dst[spans[i].key:spans[i].keyEnd] }
	found := false
	if scratch == nil { // short: compare pairwise
		for i := 1; i < len(spans); i++ {
			for j := range i {
				if !spans[j].skip && bytes.Equal(key(i), key(j)) {
					spans[j].src, spans[i].skip, found = i, true, true
					break
				}
			}
		}
		return found
	}
	order := scratch.order[:0]
	for i := range spans {
		order = append(order, i)
	}
	scratch.order = order
	slices.SortFunc(order, func(a, b int) int {
		if c := bytes.Compare(key(a), key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && bytes.Equal(key(order[i]), key(order[j])) {
			spans[order[j]].skip = true
			j++
		}
		if j > i+1 {
			spans[order[i]].src, found = order[j-1], true
		}
		i = j
	}
	return found
}

// Semantic-convention keys of a record's error.
const (
	exceptionMessage = "exception.message"
	exceptionType    = "exception.type"
)

// appendException appends re.err as the exception.message and
// exception.type LogRecord attributes, after the others, as the OTel SDK
// derives them from the error otelslog sets on the record: the message
// only if not empty, and neither where an attribute of that key was logged.
func appendException(dst []byte, re *recordErr) []byte {
	if !re.hasMsg {
		if msg := errorText(re.err); msg != "" {
			dst = appendStringKV(dst, exceptionMessage, msg)
		}
	}
	if re.hasType {
		return dst
	}
	dst, mKV := openLen(dst, fLRAttributes)
	start := mKV - 1 // the tag is one byte
	dst = appendString(dst, fKVKey, exceptionType)
	dst, mAV := openLen(dst, fKVValue)
	dst, mS := openLen(dst, fAVString)
	name := len(dst)
	dst = appendErrorType(dst, re.err)
	if len(dst) == name {
		return dst[:start]
	}
	dst = closeLen(fixUTF8(dst, name), mS)
	dst = closeLen(dst, mAV)
	return closeLen(dst, mKV)
}

// appendStringKV appends the LogRecord attribute key=s.
func appendStringKV(dst []byte, key, s string) []byte {
	dst, mKV := openLen(dst, fLRAttributes)
	dst = appendString(dst, fKVKey, key)
	dst, mAV := openLen(dst, fKVValue)
	dst = closeLen(appendString(dst, fAVString, s), mAV)
	return closeLen(dst, mKV)
}

// appendErrorType appends the OTel SDK's exception.type for err: its
// ErrorType() if it has one, else the type's package path and name, after
// unwrapping fmt.Errorf's single-%w wrappers, or the type's text for an
// unnamed type (such as *errors.errorString). A panicking ErrorType is
// ignored.
func appendErrorType(dst []byte, err error) []byte {
	if et, ok := err.(interface{ ErrorType() string }); ok {
		if s := errorTypeMethod(et); s != "" {
			return append(dst, s...)
		}
	}
	for reflect.TypeOf(err) == fmtWrapErrorType {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		err = u
	}
	t := reflect.TypeOf(err)
	if pkg, name := t.PkgPath(), t.Name(); pkg != "" && name != "" {
		return append(append(append(dst, pkg...), '.'), name...)
	}
	return append(dst, t.String()...)
}

var fmtWrapErrorType = reflect.TypeOf(fmt.Errorf("wrapped: %w", errors.New("err")))

func errorTypeMethod(et interface{ ErrorType() string }) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return et.ErrorType()
}
