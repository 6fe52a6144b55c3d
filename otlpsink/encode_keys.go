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
	n := 0
	for p := start; p < len(dst); n++ {
		s, ok := readKV(dst, p)
		if !ok {
			return dst // not written here: leave it
		}
		p = s.end
	}
	if n < 2 {
		return dst
	}
	if n <= smallList {
		var stack [smallList]kvSpan
		return dedupSpans(dst, start, collectKVs(dst, start, stack[:0]), nil)
	}
	scratch := spareScratch.Swap(nil)
	if scratch == nil {
		scratch = new(dedupScratch)
	}
	spans := collectKVs(dst, start, scratch.spans[:0])
	dst = dedupSpans(dst, start, spans, scratch)
	scratch.spans = spans[:0] // the grown array serves the next long list
	spareScratch.Store(scratch)
	return dst
}

// collectKVs appends the spans of the elements of dst[start:], which
// readKV accepts, to spans.
func collectKVs(dst []byte, start int, spans []kvSpan) []kvSpan {
	for p := start; p < len(dst); {
		s, _ := readKV(dst, p)
		s.src = len(spans)
		spans = append(spans, s)
		p = s.end
	}
	return spans
}

// dedupSpans rewrites dst[start:], whose elements are spans, with each key
// once (see uniqueKeys); scratch is nil for a short list.
func dedupSpans(dst []byte, start int, spans []kvSpan, scratch *dedupScratch) []byte {
	if !markRepeats(dst, spans, scratch) {
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
	n, w := protowire.ConsumeVarint(dst[p+1:])
	if w < 0 || uint64(len(dst)-p-1-w) < n {
		return kvSpan{}, false
	}
	body := p + 1 + w
	end := body + int(n)
	if body >= end || dst[body] != byte(fKVKey<<3|protowire.BytesType) {
		return kvSpan{}, false
	}
	kl, kw := protowire.ConsumeVarint(dst[body+1 : end])
	if kw < 0 || uint64(end-body-1-kw) < kl {
		return kvSpan{}, false
	}
	key := body + 1 + kw
	return kvSpan{start: p, end: end, key: key, keyEnd: key + int(kl)}, true
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

// appendException appends err as the exception.message and exception.type
// attributes after the LogRecord attributes in dst[attrs:], as the OTel
// SDK derives them from the error otelslog sets on the record: the message
// only if not empty, and neither where an attribute of that key was logged.
func appendException(dst []byte, attrs int, err error) []byte {
	hasMsg, hasType := false, false
	for p := attrs; p < len(dst); {
		s, ok := readKV(dst, p)
		if !ok {
			break
		}
		switch k := dst[s.key:s.keyEnd]; string(k) { // no allocation: compared, not kept
		case exceptionMessage:
			hasMsg = true
		case exceptionType:
			hasType = true
		}
		p = s.end
	}
	if !hasMsg {
		if msg := errorText(err); msg != "" {
			dst = appendStringKV(dst, exceptionMessage, msg)
		}
	}
	if !hasType {
		dst, mKV := openLen(dst, fLRAttributes)
		start := mKV - 1
		dst = appendString(dst, fKVKey, exceptionType)
		dst, mAV := openLen(dst, fKVValue)
		dst, mS := openLen(dst, fAVString)
		name := len(dst)
		dst = appendErrorType(dst, err)
		if len(dst) == name {
			return dst[:start]
		}
		dst = closeLen(fixUTF8(dst, name), mS)
		dst = closeLen(dst, mAV)
		return closeLen(dst, mKV)
	}
	return dst
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
