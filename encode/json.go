package encode

// The JSON format: the fast path (no ReplaceAttr) and the JSON-only value
// writers the general code in state.go shares with it.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// appendJSON is the JSON fast path. keys, if not nil, collects the keys of
// the record for Options.UniqueKeys (uniquekeys_fast.go).
func (e *Encoder) appendJSON(b []byte, r *slog.Record, extra []slog.Attr, keys *recordKeys) []byte {
	c := e.c
	bud := newBudget(len(b))
	b = append(b, '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":`...)
		b = appendJSONTime(b, r.Time)
		b = append(b, ',')
	}
	if l := r.Level; l >= levelTabMin && l <= levelTabMax {
		b = append(b, c.levelTok[l-levelTabMin]...)
	} else {
		b = append(b, `"level":`...)
		b = appendJSONString(b, c.levelName(l))
	}
	if c.addSource {
		if src := sourceFor(r.PC); src != nil {
			b = e.appendSource(b, src, ",")
		}
	}
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, r.Message)
	return e.appendJSONFields(b, r, extra, &bud, keys)
}

// appendJSONFields appends what follows the built-in fields: the logger
// name, extra, the WithAttrs/WithGroup state and the record's attributes,
// then closes the line. bud is the record's budget, started at the '{';
// keys, if not nil, collects the keys written (uniquekeys_fast.go).
func (e *Encoder) appendJSONFields(b []byte, r *slog.Record, extra []slog.Attr, bud *budget, keys *recordKeys) []byte {
	if len(e.named) > 0 {
		b = append(b, ',')
		b = append(b, e.named...)
	}
	for _, a := range extra {
		if bud.truncated {
			break
		}
		// Each extra attr starts from a "," separator; one that writes
		// nothing leaves none behind (see state.appendResolved).
		if nb, ok := appendJSONAttr(b, a, true); ok && bud.fits(len(b)) {
			if keys != nil {
				keys.note(nb, len(b)+1, len(a.Key), 0) // after the ','
			}
			b = nb
			bud.take()
		} else {
			if keys != nil {
				keys.fail()
			}
			b, _, _ = e.slowAttr(b, a, ",", "", bud)
		}
	}
	comma := true
	if pre := e.pre; len(pre) > 0 {
		b = append(b, ',')
		b = append(b, pre...)
		comma = pre[len(pre)-1] != '{'
	}
	// The record's groups are opened before its attrs and taken back if
	// none of them writes anything, which also covers a record without
	// attrs (not asked for up front: r.NumAttrs copies the whole Record).
	closeN := len(e.groups)
	{
		pos := len(b)
		if len(e.recGroups) > 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, e.recGroups...)
			comma = false
		}
		st := jsonAttrsState{comma: comma, bud: bud, keys: keys}
		if front, back, ok := recordAttrs(r); ok {
			b = e.appendJSONAttrs(b, front, &st)
			b = e.appendJSONAttrs(b, back, &st)
		} else {
			r.Attrs(func(a slog.Attr) bool {
				b = e.appendJSONRecordAttr(b, &a, &st)
				return !bud.truncated
			})
		}
		wrote := st.wrote
		if !wrote {
			b = b[:pos]
			closeN = e.nOpenGroups
		}
	}
	for range closeN {
		b = append(b, '}')
	}
	return append(b, '}', '\n')
}

// jsonAttrsState is appendJSON's state across a record's attributes.
type jsonAttrsState struct {
	comma bool // the next attribute needs a ',' before it
	wrote bool // an attribute wrote something
	bud   *budget
	keys  *recordKeys // Options.UniqueKeys: the keys written, or nil
}

// appendJSONAttrs appends the record attributes as, stopping once the
// budget is spent (the rest is left out, as in the general code).
func (e *Encoder) appendJSONAttrs(b []byte, as []slog.Attr, st *jsonAttrsState) []byte {
	for i := range as {
		if st.bud.truncated {
			break
		}
		b = e.appendJSONRecordAttr(b, &as[i], st)
	}
	return b
}

// appendJSONRecordAttr appends one record attribute: the common kinds
// without a further call, the rest through the general code.
func (e *Encoder) appendJSONRecordAttr(b []byte, a *slog.Attr, st *jsonAttrsState) []byte {
	at := len(b)
	k := a.Value.Kind()
	if !st.bud.fits(len(b)) {
		k = slog.KindAny // the general code writes TruncatedValue
	} else if k != slog.KindAny && k != slog.KindGroup && k != slog.KindLogValuer {
		st.bud.take()
	}
	switch k {
	case slog.KindString:
		b = appendJSONString(appendJSONKey(b, a.Key, st.comma), a.Value.String())
	case slog.KindInt64, slog.KindDuration: // JSON writes a duration's nanoseconds
		b = appendJSONKey(b, a.Key, st.comma)
		if x := valueInt64(&a.Value, k); x >= 0 {
			b = appendUint(b, uint64(x)) // saves appendInt's call
		} else {
			b = appendInt(b, x)
		}
	case slog.KindBool:
		b = appendBool(appendJSONKey(b, a.Key, st.comma), valueBool(&a.Value))
	case slog.KindAny, slog.KindGroup, slog.KindLogValuer:
		sep := ""
		if st.comma {
			sep = ","
		}
		var ok bool
		b, sep, ok = e.slowAttr(b, *a, sep, "", st.bud)
		st.comma = sep != ""
		st.wrote = st.wrote || ok
		if st.keys != nil {
			st.keys.fail()
		}
		return b
	default:
		b = appendJSONScalar(appendJSONKey(b, a.Key, st.comma), a.Value, k)
	}
	if st.keys != nil {
		if st.comma {
			at++ // the key's quote follows the ','
		}
		st.keys.note(b, at, len(a.Key), st.keys.inner)
	}
	st.comma, st.wrote = true, true
	return b
}

// appendJSONAttr appends a scalar attribute (preceded by ',' if comma) and
// reports true, or reports false, having written nothing, for the kinds
// that need the general code.
func appendJSONAttr(b []byte, a slog.Attr, comma bool) ([]byte, bool) {
	v := a.Value
	k := v.Kind()
	if !isScalar(k) {
		return b, false
	}
	b = appendJSONKey(b, a.Key, comma)
	return appendJSONScalar(b, v, k), true
}

// appendJSONScalar appends a scalar value (not KindAny, KindLogValuer or
// KindGroup) the way slog's JSONHandler does.
func appendJSONScalar(b []byte, v slog.Value, k slog.Kind) []byte {
	switch k {
	case slog.KindString:
		return appendJSONString(b, v.String())
	case slog.KindInt64, slog.KindDuration: // a duration as its nanoseconds
		return appendInt(b, valueInt64(&v, k))
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, valueBool(&v))
	case slog.KindTime:
		return appendJSONTime(b, v.Time())
	default: // slog.KindFloat64
		return appendJSONFloatValue(b, v.Float64())
	}
}

func appendJSONFloatValue(b []byte, f float64) []byte {
	switch {
	case f != f:
		return append(b, `"!ERROR:json: unsupported value: NaN"`...)
	case f > math.MaxFloat64:
		return append(b, `"!ERROR:json: unsupported value: +Inf"`...)
	case f < -math.MaxFloat64:
		return append(b, `"!ERROR:json: unsupported value: -Inf"`...)
	}
	return appendJSONFloat(b, f)
}

// appendJSONString appends s as a quoted JSON string, escaped as slog does.
func appendJSONString(b []byte, s string) []byte { return appendQuotedJSON(b, s, false) }

// appendQuotedJSON appends s quoted and escaped as slog does, or, with
// jsonBF, as encoding/json does (it writes \b and \f as such).
func appendQuotedJSON(b []byte, s string, jsonBF bool) []byte {
	n, i := len(s), len(b)
	if cap(b)-i < n+2 {
		b = slices.Grow(b, n+2)
	}
	w := b[i : i+n+2]
	w[0] = '"'
	if !putJSONClean(w[1:n+1], s) {
		b = appendEscapedJSONAs(b[:i+1], s, jsonInvalidUTF8, jsonBF)
		return append(b, '"')
	}
	w[n+1] = '"'
	return b[:i+n+2]
}

// appendJSONKey appends ,"key": (without the comma unless comma). Keys of
// 1 to keyCacheMax bytes are looked up in jsonKeys first (keycache.go).
func appendJSONKey(b []byte, key string, comma bool) []byte {
	n, i := len(key), len(b)
	if uint(n-1) >= keyCacheMax || cap(b)-i < len(keyEntry{}.enc) {
		return appendJSONKeySlow(b, key, comma)
	}
	// keyWords(key), written out: the call is not inlined.
	var lo, hi uint64
	switch {
	case n >= 8:
		lo, hi = load64(key, 0), load64(key, n-8)
	case n >= 4:
		lo, hi = load32(key, 0), load32(key, n-4)
	default:
		lo = uint64(key[0]) | uint64(key[n>>1])<<8 | uint64(key[n-1])<<16
	}
	slot := &jsonKeys[keySlot(lo, hi)]
	// Load pairs with the CompareAndSwap in publishKey: the entry it
	// returns was fully built before it was published and is never modified.
	if c := slot.Load(); c != nil && c.lo == lo && c.hi == hi && int(c.n) == n {
		// lo, hi and n determine every byte of key, so c holds key's own
		// encoding: copy it as one fixed-size block into b's spare capacity.
		w := b[i : i+len(c.enc)]
		if comma {
			*(*[len(c.enc)]byte)(w) = c.enc
			return b[:i+n+4]
		}
		// Without the comma: enc[1:], as two overlapping 16-byte moves
		// (one 19-byte copy would call memmove).
		*(*[16]byte)(w) = [16]byte(c.enc[1:17])
		*(*[16]byte)(w[3:]) = [16]byte(c.enc[4:20])
		return b[:i+n+3]
	}
	// A tail call: the hit path above then keeps nothing for after a call
	// (no spills, a small frame).
	return appendJSONKeyMiss(b, key, comma, slot)
}

// appendJSONKeyMiss is appendJSONKey after a cache miss on slot: the key is
// encoded directly and, if the slot is still empty, published in it.
func appendJSONKeyMiss(b []byte, key string, comma bool, slot *atomic.Pointer[keyEntry]) []byte {
	b = appendJSONKeySlow(b, key, comma)
	if slot.Load() == nil && jsonClean(key) { // a racy pre-check only: publishKey uses a CAS
		var enc [keyCacheMax + 4]byte
		publishKey(slot, key, append(append(append(enc[:0], ',', '"'), key...), '"', ':'))
	}
	return b
}

// appendJSONKeySlow is appendJSONKey for long keys and a full buffer.
func appendJSONKeySlow(b []byte, key string, comma bool) []byte {
	n, i := len(key), len(b)
	if cap(b)-i < n+4 {
		b = slices.Grow(b, n+4)
	}
	w := b[i : i+n+4]
	if comma {
		w[0] = ','
		i++
		w = w[1:]
	}
	w[0] = '"'
	if !putJSONClean(w[1:n+1], key) {
		b = appendEscapedJSON(b[:i+1], key)
		return append(b, '"', ':')
	}
	w[n+1], w[n+2] = '"', ':'
	return b[:i+n+3]
}

// putJSONClean copies s to w, which has len(s) bytes, and reports whether s
// is ASCII that needs no JSON escaping (jsonClean). It checks and copies in
// one pass, a word at a time, storing each word once it has checked it; when
// it reports false, w holds an unspecified part of s.
func putJSONClean(w []byte, s string) bool {
	n := len(s)
	w = w[:n]
	switch {
	case n >= 8:
		for j := 0; j+8 <= n; j += 8 {
			x := load64(s, j)
			if !jsonPlainWord(x) {
				return false
			}
			binary.LittleEndian.PutUint64(w[j:], x)
		}
		if n&7 != 0 {
			// A final word overlapping the last one checked.
			x := load64(s, n-8)
			if !jsonPlainWord(x) {
				return false
			}
			binary.LittleEndian.PutUint64(w[n-8:], x)
		}
	case n >= 4:
		lo, hi := load32(s, 0), load32(s, n-4) // overlapping for n < 8
		if !jsonPlainWord(lo | hi<<32) {
			return false
		}
		binary.LittleEndian.PutUint32(w, uint32(lo))
		binary.LittleEndian.PutUint32(w[n-4:], uint32(hi))
	case n > 0: // 1 to 3 bytes: the first, the middle and the last are all of them
		a, m, z := s[0], s[n>>1], s[n-1]
		if byteClass[a]&byteClass[m]&byteClass[z]&clsJSON == 0 {
			return false
		}
		w[0], w[n>>1], w[n-1] = a, m, z
	}
	return true
}

type jsonEncoder struct {
	buf *bytes.Buffer
	enc *json.Encoder
}

var jsonEncoderPool = sync.Pool{New: func() any {
	j := &jsonEncoder{buf: new(bytes.Buffer)}
	j.enc = json.NewEncoder(j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}}

// appendJSONMarshal appends v as encoding/json encodes it with HTML
// escaping off, as slog does.
func appendJSONMarshal(buf *[]byte, v any) error {
	j := jsonEncoderPool.Get().(*jsonEncoder)
	defer func() {
		if j.buf.Cap() > 16<<10 { // keep only small buffers, as slog does
			return
		}
		j.buf.Reset()
		jsonEncoderPool.Put(j)
	}()
	if err := j.enc.Encode(v); err != nil {
		return err
	}
	bs := j.buf.Bytes()
	*buf = append(*buf, bs[:len(bs)-1]...) // drop Encode's newline
	return nil
}
