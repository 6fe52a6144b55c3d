package encode

// Unique keys (Options.UniqueKeys): each key once per object, the last
// value at the first position.
//
// The line is encoded as usual and its keys are then checked where they
// are final: after ReplaceAttr, LogValuer resolution, logfmt's key
// sanitizing, and across the logger name, the Context fields, the
// pre-encoded WithAttrs state and the record. A line without a repeated key
// (the common case) is returned as encoded, at the cost of one scan; a line
// with one is rewritten.

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
)

// appendUnique is AppendRecord with Options.UniqueKeys.
func (e *Encoder) appendUnique(dst []byte, r *slog.Record, extra []slog.Attr) []byte {
	start := len(dst)
	switch f := e.c.format; {
	case f == Console:
		b, at := e.appendGeneralAt(dst, *r, extra)
		if e.c.seqKeys {
			b, _ = renameReservedTokens(b, at) // reserved.go
		}
		return uniqueTokens(b, at)
	case f.isZap() && e.zapFmt().console:
		b := e.appendVia(e.inner, dst, r, extra)
		return e.uniqueZapConsole(b, start, r, extra)
	case e.uniq != nil: // the JSON fast paths (uniquekeys_fast.go)
		keys := newRecordKeys(e.uniq)
		var b []byte
		if e.inner == fastPresetJSON {
			b = e.appendPresetJSON(dst, r, extra, &keys)
		} else {
			b = e.appendJSON(dst, r, extra, &keys)
		}
		if e.c.seqKeys {
			var renamed bool
			if b, _, renamed = renameReservedJSON(b, start, len(b)-1); renamed { // reserved.go
				return uniqueJSON(b, start, len(b)-1, false) // seq_ may repeat a key of its own
			}
		}
		switch {
		case keys.proven():
			return b // scalars under keys new in their objects: nothing to scan
		case keys.repeat:
			return rewriteJSON(b, start, len(b)-1, false)
		}
		return uniqueJSON(b, start, len(b)-1, false)
	case e.c.json || f.isZap():
		b := e.appendVia(e.inner, dst, r, extra)
		if e.c.seqKeys {
			b, _, _ = renameReservedJSON(b, start, len(b)-1) // reserved.go
		}
		return uniqueJSON(b, start, len(b)-1, false)
	default: // Text, Logfmt
		b := e.appendVia(e.inner, dst, r, extra)
		if e.c.seqKeys {
			b, _ = renameReservedTokens(b, start) // reserved.go
		}
		return uniqueTokens(b, start)
	}
}

// uniqueZapConsole makes the keys of a ZapConsole line b[start:] unique: its
// fields are the JSON object after the message (which is written raw, so
// the object is found from the end of the line, by the length of the fields
// encoded again).
func (e *Encoder) uniqueZapConsole(b []byte, start int, r *slog.Record, extra []slog.Attr) []byte {
	var stack string
	scratch := scratchPool.Get().(*[]byte)
	fields := e.appendZapFields((*scratch)[:0], r, extra, e.zapFmt(), &stack)
	n := len(fields)
	putScratch(scratch, fields)
	if n == 0 {
		return b
	}
	end := len(b) - 2 // the '}' before the '\n'
	if stack != "" {
		end -= len(stack) + 1
	}
	open := end - n - 1
	if open < start || b[open] != '{' || b[end] != '}' {
		return b // the fields encoded differently the second time (a LogValuer with state): left as they are
	}
	if e.c.seqKeys {
		b, end, _ = renameReservedJSON(b, open, end+1) // reserved.go
		end--
	}
	return uniqueJSON(b, open, end+1, true)
}

// uniqueTokens makes the keys of the key=value tokens of b[from:len(b)-1]
// (Text, Logfmt, Console; b ends in '\n') unique. A token's key ends at its
// first '=' outside quotes; tokens are separated by ' ' outside quotes.
func uniqueTokens(b []byte, from int) []byte {
	end := len(b) - 1
	var stack [32]tokSpan
	toks := stack[:0]
	var bloom [4]uint64
	dup := false
	sep := from // where the separator before the next token starts
	for p := from; p < end; {
		if b[p] == ' ' {
			p++
			continue
		}
		t := tokSpan{start: p, keyEnd: -1}
		for p < end && b[p] != ' ' {
			switch b[p] {
			case '"':
				p = skipQuoted(b, p, end)
			case '=':
				if t.keyEnd < 0 {
					t.keyEnd = p
				}
				p++
			default:
				for p++; p < end && !tokenSpecial[b[p]]; p++ {
				}
			}
		}
		t.end = p
		if t.keyEnd < 0 {
			continue // not key=value: written as it is
		}
		key := b[t.start:t.keyEnd]
		if !dup && bloomAdd(&bloom, key) {
			for _, o := range toks {
				if bytes.Equal(b[o.start:o.keyEnd], key) {
					dup = true
					break
				}
			}
		}
		t.sep = sep
		sep = t.end
		toks = append(toks, t)
	}
	if !dup {
		return b
	}
	return rewriteTokens(b, from, toks)
}

// tokSpan is one key=value token b[start:end] whose key is b[start:keyEnd];
// b[sep:start] separates it from the token before it. first marks a key's
// first token, whose last is the index of the key's last token.
type tokSpan struct {
	sep, start, keyEnd, end int
	last                    int
	first                   bool
}

// rewriteTokens rewrites b[from:] with each key of toks once, at its first
// position, with its last value.
func rewriteTokens(b []byte, from int, toks []tokSpan) []byte {
	for i := range toks {
		toks[i].last, toks[i].first = i, true
	}
	key := func(i int) []byte { return b[toks[i].start:toks[i].keyEnd] }
	if len(toks) <= 32 {
		for i := 1; i < len(toks); i++ {
			for k := range i {
				if toks[k].first && bytes.Equal(key(k), key(i)) {
					toks[k].last, toks[i].first = i, false
					break
				}
			}
		}
	} else {
		firstOf := make(map[string]int, len(toks))
		for i := range toks {
			if f, ok := firstOf[string(key(i))]; ok {
				toks[f].last, toks[i].first = i, false
			} else {
				firstOf[string(key(i))] = i
			}
		}
	}
	scratch := scratchPool.Get().(*[]byte)
	out := (*scratch)[:0]
	for _, t := range toks {
		if !t.first {
			continue // with its separator
		}
		v := toks[t.last]
		out = append(out, b[t.sep:t.keyEnd]...) // the separator and the key
		out = append(out, b[v.keyEnd:v.end]...)
	}
	out = append(out, b[toks[len(toks)-1].end:]...) // the rest, '\n' included
	b = append(b[:from], out...)
	putScratch(scratch, out)
	return b
}

// scratchPool recycles the scratch buffers of the rewrites.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// putScratch returns a scratch buffer, now grown to b, to scratchPool.
func putScratch(p *[]byte, b []byte) {
	if cap(b) <= 64<<10 { // keep only small buffers
		*p = b[:0]
		scratchPool.Put(p)
	}
}

// tokenSpecial marks the bytes that end a run of plain token bytes.
var tokenSpecial = [256]bool{' ': true, '"': true, '=': true}

// skipQuoted returns the index after the closing quote of the quoted
// string at b[p] (backslash escapes, as strconv.Quote and JSON write
// them), or end if it is not closed before end.
func skipQuoted(b []byte, p, end int) int {
	if q := closingQuote(b, p, end); q >= 0 {
		return q + 1
	}
	return end
}

// closingQuote returns the index of the quote that closes the quoted
// string at b[p], or -1 if none does before end.
func closingQuote(b []byte, p, end int) int {
	// Short strings (most keys) byte by byte; IndexByte's call pays off
	// past them.
	q := p + 1
	for lim := min(end, p+17); q < lim; q++ {
		switch b[q] {
		case '\\':
			q++
		case '"':
			return q
		}
	}
	if q >= end {
		return -1
	}
	return closingQuoteLong(b, p, q, end)
}

// closingQuoteLong is closingQuote from q on: b[p+1:q] holds no closing
// quote. A quote is escaped if an odd number of backslashes precede it.
func closingQuoteLong(b []byte, p, q, end int) int {
	for q < end {
		i := bytes.IndexByte(b[q:end], '"')
		if i < 0 {
			return -1
		}
		q += i
		n := 0
		for k := q - 1; k > p && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		q++
	}
	return -1
}

// bloomAdd sets key's bit in bloom and reports whether it was set already
// (a repeated key, or another key with the same bit).
func bloomAdd(bloom *[4]uint64, key []byte) bool {
	h := uint32(2166136261) // FNV-1a
	for _, c := range key {
		h = (h ^ uint32(c)) * 16777619
	}
	w, bit := h>>6&3, uint64(1)<<(h&63)
	seen := bloom[w]&bit != 0
	bloom[w] |= bit
	return seen
}

// uniqueJSON makes the keys of every JSON object in the value b[open:end]
// unique (spaced: the zap console style, ", " between members) and returns
// b with the value rewritten if a key repeated. What follows end is kept.
func uniqueJSON(b []byte, open, end int, spaced bool) []byte {
	if !spaced && quickUniqueJSON(b, open, end) {
		return b // the common case, proven in one flat pass (uniquekeys_fast.go)
	}
	return rewriteJSON(b, open, end, spaced)
}

// rewriteJSON is uniqueJSON without the flat pass, for a line already
// known to repeat a key.
func rewriteJSON(b []byte, open, end int, spaced bool) []byte {
	dup := false
	if p := scanJSON(b, skipSpace(b, open, end), end, &dup, 0); p < 0 || !dup {
		return b // no repeated key, or not JSON this package wrote: left alone
	}
	j := jsonRewriter{b: b, end: end, spaced: spaced}
	p := skipSpace(b, open, end)
	scratch := scratchPool.Get().(*[]byte)
	out := j.value((*scratch)[:0], p, scanJSON(b, p, end, nil, 0), 0)
	out = append(out, b[end:]...) // what follows the value
	b = append(b[:open], out...)
	putScratch(scratch, out)
	return b
}

func skipSpace(b []byte, p, end int) int {
	for p < end && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

// maxJSONDepth bounds the recursion of the scan; deeper lines are left alone.
const maxJSONDepth = maxDepth + 64

// scanJSON returns the end of the JSON value at b[p:end], or -1 if it is
// not one; it sets *dup when an object in it has a key twice (dup nil:
// only the end is wanted).
func scanJSON(b []byte, p, end int, dup *bool, depth int) int {
	if p >= end || depth > maxJSONDepth {
		return -1
	}
	if dup == nil && (b[p] == '{' || b[p] == '[') {
		return skipJSONContainer(b, p, end)
	}
	switch b[p] {
	case '"':
		if q := closingQuote(b, p, end); q >= 0 {
			return q + 1
		}
		return -1
	case '[':
		p = skipSpace(b, p+1, end)
		if p < end && b[p] == ']' {
			return p + 1
		}
		for {
			if p = scanJSON(b, p, end, dup, depth+1); p < 0 {
				return -1
			}
			if p = skipSpace(b, p, end); p >= end {
				return -1
			}
			if b[p] == ']' {
				return p + 1
			}
			if b[p] != ',' {
				return -1
			}
			p = skipSpace(b, p+1, end)
		}
	case '{':
		return scanJSONObject(b, p, end, dup, depth)
	}
	q := p
	for q < end && b[q] != ',' && b[q] != '}' && b[q] != ']' && b[q] != ' ' {
		q++ // a number, true, false or null
	}
	if q == p {
		return -1
	}
	return q
}

// skipJSONContainer returns the end of the object or array at b[p], which
// scanJSON has already checked, or -1.
func skipJSONContainer(b []byte, p, end int) int {
	depth := 0
	for ; p < end; p++ {
		switch b[p] {
		case '"':
			if p = closingQuote(b, p, end); p < 0 {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return p + 1
			}
		}
	}
	return -1
}

func scanJSONObject(b []byte, p, end int, dup *bool, depth int) int {
	var bloom [4]uint64
	var stack [32][2]int
	keys := stack[:0]
	p = skipSpace(b, p+1, end)
	if p < end && b[p] == '}' {
		return p + 1
	}
	for {
		if p >= end || b[p] != '"' {
			return -1
		}
		ks := p
		if p = scanJSON(b, p, end, dup, depth+1); p < 0 {
			return -1
		}
		if dup != nil && !*dup && bloomAdd(&bloom, canonicalKey(b[ks:p])) {
			for _, k := range keys {
				if jsonKeyEqual(b[k[0]:k[1]], b[ks:p]) {
					*dup = true
				}
			}
		}
		keys = append(keys, [2]int{ks, p})
		if p = skipSpace(b, p, end); p >= end || b[p] != ':' {
			return -1
		}
		if p = scanJSON(b, skipSpace(b, p+1, end), end, dup, depth+1); p < 0 {
			return -1
		}
		if p = skipSpace(b, p, end); p >= end {
			return -1
		}
		if b[p] == '}' {
			return p + 1
		}
		if b[p] != ',' {
			return -1
		}
		p = skipSpace(b, p+1, end)
	}
}

// canonicalKey returns a quoted JSON key as compared: its bytes, or, when
// it has escapes, its decoded text (two spellings of one key are one key).
func canonicalKey(q []byte) []byte {
	if bytes.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return q
	}
	return []byte(s)
}

func jsonKeyEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return false
	}
	return bytes.Equal(canonicalKey(a), canonicalKey(b))
}

// jsonRewriter writes a JSON value with each object's keys unique: a key
// keeps its first position; its value is the last one, except that
// consecutive object values from the last non-object one on are merged
// (in turn with unique keys), as the dotted keys of the text formats merge
// the groups of one name.
type jsonRewriter struct {
	b      []byte
	end    int
	spaced bool
}

// jsonMember is one member of an object: key b[ks:ke], value b[vs:ve];
// next is the next member with its key (-1: none), first marks the first.
type jsonMember struct {
	ks, ke, vs, ve int
	next           int
	first          bool
}

// value appends the value b[p:ve] and returns out.
func (j *jsonRewriter) value(out []byte, p, ve, depth int) []byte {
	b := j.b
	switch b[p] {
	case '{':
		one := [1]int{p}
		return j.objects(out, one[:], depth)
	case '[':
		out = append(out, '[')
		q := skipSpace(b, p+1, ve)
		for b[q] != ']' {
			e := scanJSON(b, q, ve, nil, depth+1)
			out = j.value(out, q, e, depth+1)
			q = skipSpace(b, e, ve)
			if b[q] == ',' {
				next := skipSpace(b, q+1, ve)
				out = append(out, b[q:next]...)
				q = next
			}
		}
		return append(out, ']')
	}
	return append(out, b[p:ve]...)
}

// objects appends the objects starting at objs, merged into one.
func (j *jsonRewriter) objects(out []byte, objs []int, depth int) []byte {
	b := j.b
	var msStack [16]jsonMember
	ms := msStack[:0]
	for _, p := range objs {
		p = skipSpace(b, p+1, j.end)
		for b[p] != '}' {
			ke := scanJSON(b, p, j.end, nil, depth+1)
			vs := skipSpace(b, ke, j.end)
			vs = skipSpace(b, vs+1, j.end) // past ':'
			ve := scanJSON(b, vs, j.end, nil, depth+1)
			ms = append(ms, jsonMember{ks: p, ke: ke, vs: vs, ve: ve, next: -1, first: true})
			p = skipSpace(b, ve, j.end)
			if b[p] == ',' {
				p = skipSpace(b, p+1, j.end)
			}
		}
	}
	linkRepeats(b, ms)
	out = append(out, '{')
	sep := ","
	if j.spaced {
		sep = ", "
	}
	var mergedStack [4]int
	for i, m := range ms {
		if !m.first {
			continue
		}
		if out[len(out)-1] != '{' {
			out = append(out, sep...)
		}
		out = append(out, b[m.ks:m.vs]...) // the key, ':' and its spacing
		// The values from the last non-object on: objects are merged.
		merged := mergedStack[:0]
		last := i
		for k := i; k >= 0; k = ms[k].next {
			last = k
			if b[ms[k].vs] == '{' {
				merged = append(merged, ms[k].vs)
			} else {
				merged = merged[:0]
			}
		}
		if len(merged) > 1 {
			out = j.objects(out, merged, depth+1)
		} else {
			out = j.value(out, ms[last].vs, ms[last].ve, depth+1)
		}
	}
	return append(out, '}')
}

// linkRepeats links each member of ms to the next one with its key (next)
// and clears first on all but a key's first member: pairwise for short
// lists, through a map for long ones.
func linkRepeats(b []byte, ms []jsonMember) {
	key := func(i int) []byte { return b[ms[i].ks:ms[i].ke] }
	if len(ms) <= 32 {
		for i := 1; i < len(ms); i++ {
			for k := i - 1; k >= 0; k-- {
				if jsonKeyEqual(key(k), key(i)) {
					ms[k].next, ms[i].first = i, false // k is the latest before i
					break
				}
			}
		}
		return
	}
	lastOf := make(map[string]int, len(ms))
	for i := range ms {
		k := string(canonicalKey(key(i)))
		if l, ok := lastOf[k]; ok {
			ms[l].next, ms[i].first = i, false
		}
		lastOf[k] = i
	}
}
