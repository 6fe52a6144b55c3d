package encode

// Reading a slog.Record's attributes without Record.Attrs.
//
// Record.Attrs copies the whole Record (a value receiver, ~300 bytes) and
// calls a closure per attribute with a 40-byte copy of it; the closure in
// turn reaches the encoder's state through captured pointers (its cost is
// in docs/design.md). A Record
// keeps its attributes in two places (slog's record.go): an inline array
// `front` of which the first `nFront` are used, then the slice `back`.
// recordAttrs returns both as slices, which the fast paths range over.
//
// Those fields are slog's private business. Their offsets are not written
// down here but looked up by name with reflect (which reports unexported
// fields' offsets and types without reading them), each field's type is
// checked, and the result is compared once at start-up with Record.Attrs
// on records of 0 to 12 attributes with distinctive contents
// (recordAttrsOK). If a Go release renames, retypes or repurposes a field,
// the check fails and every caller uses Record.Attrs instead. unsafe here
// only reads inside the Record the caller holds: an int, a slice header and
// an array within the struct, with nFront bounds-checked on every call.

import (
	"log/slog"
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// attrsLayout is where a Record keeps its attributes: the byte offsets of
// front, nFront and back, and len(front) (0 if the fields are not there).
type attrsLayout struct {
	front, nFront, back uintptr
	frontLen            int
}

// recordLayout is slog.Record's attrsLayout.
var recordLayout = attrsLayoutOf(reflect.TypeFor[slog.Record]())

// attrsLayoutOf finds front ([N]slog.Attr), nFront (int) and back
// ([]slog.Attr) in the struct type t; a missing or differently typed field
// gives the zero attrsLayout, which fails recordAttrsOK.
func attrsLayoutOf(t reflect.Type) attrsLayout {
	if t.Kind() != reflect.Struct {
		return attrsLayout{}
	}
	front, ok1 := t.FieldByName("front")
	n, ok2 := t.FieldByName("nFront")
	back, ok3 := t.FieldByName("back")
	if !ok1 || !ok2 || !ok3 ||
		front.Type.Kind() != reflect.Array || front.Type.Elem() != reflect.TypeFor[slog.Attr]() ||
		n.Type != reflect.TypeFor[int]() ||
		back.Type != reflect.TypeFor[[]slog.Attr]() {
		return attrsLayout{}
	}
	return attrsLayout{front.Offset, n.Offset, back.Offset, front.Type.Len()}
}

// recordAttrsUnchecked returns r's attributes as its inline part and its
// heap part, in order; ok is false if nFront is out of range.
func recordAttrsUnchecked(r *slog.Record) (front, back []slog.Attr, ok bool) {
	p := unsafe.Pointer(r)
	n := *(*int)(unsafe.Add(p, recordLayout.nFront))
	if n < 0 || n > recordLayout.frontLen {
		return nil, nil, false
	}
	front = unsafe.Slice((*slog.Attr)(unsafe.Add(p, recordLayout.front)), recordLayout.frontLen)[:n:n]
	back = *(*[]slog.Attr)(unsafe.Add(p, recordLayout.back))
	return front, back, true
}

// recordAttrsOK reports that recordAttrsUnchecked agrees with Record.Attrs.
var recordAttrsOK = func() bool {
	if recordLayout.frontLen == 0 {
		return false
	}
	for n := range 13 {
		r := slog.NewRecord(time.Time{}, slog.LevelWarn, "check", 0x5a5a)
		for i := range n {
			r.AddAttrs(slog.Int64("k"+strconv.Itoa(i), int64(i)*0x0101010101+7))
		}
		front, back, ok := recordAttrsUnchecked(&r)
		if !ok || len(front)+len(back) != r.NumAttrs() {
			return false
		}
		i := 0
		same := true
		r.Attrs(func(a slog.Attr) bool {
			var got slog.Attr
			if i < len(front) {
				got = front[i]
			} else {
				got = back[i-len(front)]
			}
			same = same && got.Key == a.Key && got.Value.Kind() == slog.KindInt64 &&
				a.Value.Kind() == slog.KindInt64 && got.Value.Int64() == a.Value.Int64()
			i++
			return true
		})
		if !same || i != n {
			return false
		}
	}
	return true
}()

// recordAttrs returns r's attributes as two slices to range over in order
// (the inline ones, then the rest), or ok false when the layout check failed
// and the caller must use r.Attrs. The slices alias r: they must not be
// kept or modified.
func recordAttrs(r *slog.Record) (front, back []slog.Attr, ok bool) {
	if !recordAttrsOK {
		return nil, nil, false
	}
	return recordAttrsUnchecked(r)
}
