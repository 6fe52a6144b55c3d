package logwriter

import (
	"bytes"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asyncbus/asyncbus"
)

// levelScan is how far into a line that is not a JSON object a Writer
// looks for its level: the text, console and klog layouts put it in their
// first fields (logrus's text formatter writes time, level and msg before
// the sorted fields), and a bound keeps a long line's cost constant.
const levelScan = 256

var (
	jsonFirstLevel = []byte(`{"level":"`)
	jsonLevelKey   = []byte(`"level":"`)
	textLevelKey   = []byte(`level=`)
)

// lineLevel reads the level of a line that a logger encoded, in the forms
// Writer documents: a JSON object's top-level "level" string, wherever it
// is (zap, zerolog, logrus, whose sorted keys can put it after a long
// "error"), or, from the first levelScan bytes of another line, a JSON
// "level" string (an object behind a prefix), a level=
// token (logrus's and slog's text, logfmt), a tab-separated level field
// (zap's console encoder, coloured or not) or a klog header. ok is false
// when the line shows none of them.
func lineLevel(p []byte) (l slog.Level, ok bool) {
	if len(p) > 0 && p[0] == '{' {
		return jsonLevel(p)
	}
	head := p[:min(len(p), levelScan)]
	if i := bytes.Index(head, jsonLevelKey); i >= 0 { // a JSON object behind a prefix (the standard log's)
		v := head[i+len(jsonLevelKey):]
		if j := bytes.IndexByte(v, '"'); j >= 0 {
			return levelNamed(v[:j])
		}
		return 0, false
	}
	if l, ok := textLevel(head); ok {
		return l, true
	}
	if l, ok := consoleLevel(head); ok {
		return l, true
	}
	return klogHeaderLevel(head)
}

// jsonLevel reads the string value of the top-level key "level" of the
// JSON object p. It walks the object's keys, skipping each value whole
// (strings by their quotes, objects and arrays by their depth), so a key
// or a quote inside a value is never taken for one; it stops at the key,
// or at the first byte that is not JSON as the loggers write it.
func jsonLevel(p []byte) (slog.Level, bool) {
	if v, ok := bytes.CutPrefix(p, jsonFirstLevel); ok { // zap's and zerolog's first key: no walk
		if j := bytes.IndexByte(v, '"'); j >= 0 {
			return levelNamed(v[:j])
		}
		return 0, false
	}
	i := 1 // after '{'
	for {
		i = skipSpace(p, i)
		if i >= len(p) || p[i] != '"' {
			return 0, false // '}', the end, or not a key
		}
		end := skipString(p, i)
		if end < 0 {
			return 0, false
		}
		key := p[i+1 : end-1]
		i = skipSpace(p, end)
		if i >= len(p) || p[i] != ':' {
			return 0, false
		}
		i = skipSpace(p, i+1)
		if string(key) == "level" {
			if i >= len(p) || p[i] != '"' {
				return 0, false
			}
			if end = skipString(p, i); end < 0 {
				return 0, false
			}
			return levelNamed(p[i+1 : end-1])
		}
		if i = skipValue(p, i); i < 0 {
			return 0, false
		}
		i = skipSpace(p, i)
		if i >= len(p) || p[i] != ',' {
			return 0, false
		}
		i++
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string opening at p[i], or
// -1 if it does not end. A quote ends it unless an odd run of backslashes
// escapes it.
func skipString(p []byte, i int) int {
	for i++; i < len(p); {
		j := bytes.IndexByte(p[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for p[k-1] == '\\' { // p[i-1] at worst is the opening quote
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
		i++
	}
	return -1
}

// skipValue returns the index after the JSON value at p[i] (a string, an
// object or array with everything in it, or a scalar), or -1 if it does
// not end.
func skipValue(p []byte, i int) int {
	depth := 0
	for i < len(p) {
		switch c := p[i]; c {
		case '"':
			if i = skipString(p, i); i < 0 {
				return -1
			}
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // a scalar's end
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i // a scalar's end
			}
		}
		i++
	}
	return -1
}

// textLevel reads a level= token that starts the line or follows a space.
func textLevel(head []byte) (slog.Level, bool) {
	for off := 0; ; {
		i := bytes.Index(head[off:], textLevelKey)
		if i < 0 {
			return 0, false
		}
		i += off
		if i == 0 || head[i-1] == ' ' {
			v := head[i+len(textLevelKey):]
			if end := bytes.IndexAny(v, " \t\n"); end >= 0 {
				v = v[:end]
			}
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			return levelNamed(v)
		}
		off = i + len(textLevelKey)
	}
}

// consoleLevel reads zap's console layout: the level is the first or the
// second tab-separated field (after the time), plain or coloured by
// zapcore's CapitalColorLevelEncoder or LowercaseColorLevelEncoder.
func consoleLevel(head []byte) (slog.Level, bool) {
	i := bytes.IndexByte(head, '\t')
	if i < 0 {
		return 0, false
	}
	if l, ok := levelNamed(uncolor(head[:i])); ok {
		return l, true
	}
	rest := head[i+1:]
	if j := bytes.IndexByte(rest, '\t'); j >= 0 {
		return levelNamed(uncolor(rest[:j]))
	}
	return 0, false
}

// uncolor returns field without the SGR escape sequences ("\x1b[31m",
// "\x1b[0m") that open and close it, as zap's colour level encoders write
// them.
func uncolor(field []byte) []byte {
	if rest, ok := bytes.CutPrefix(field, []byte("\x1b[")); ok {
		if m := bytes.IndexByte(rest, 'm'); m >= 0 && isSGRParams(rest[:m]) {
			field = rest[m+1:]
		}
	}
	if i := bytes.LastIndex(field, []byte("\x1b[")); i >= 0 && bytes.HasSuffix(field, []byte("m")) && isSGRParams(field[i+2:len(field)-1]) {
		field = field[:i]
	}
	return field
}

// isSGRParams reports whether s is an SGR sequence's parameters: digits
// and ';'.
func isSGRParams(s []byte) bool {
	for _, c := range s {
		if c != ';' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// klogHeaderLevel reads klog's header, "Lmmdd hh:mm:ss.uuuuuu ...", whose
// first letter is the severity: I, W, E or F.
func klogHeaderLevel(head []byte) (slog.Level, bool) {
	if len(head) < 6 || head[5] != ' ' {
		return 0, false
	}
	for _, c := range head[1:5] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	switch head[0] {
	case 'I':
		return slog.LevelInfo, true
	case 'W':
		return slog.LevelWarn, true
	case 'E':
		return slog.LevelError, true
	case 'F':
		return asyncbus.LevelFatal, true
	}
	return 0, false
}

// lineLevelNames are the level names the supported loggers write, in any
// case. zap's dpanic counts as an error, a panic as fatal: the program is
// about to end unless the panic is recovered.
var lineLevelNames = []struct {
	name  []byte
	level slog.Level
}{
	{[]byte("info"), slog.LevelInfo},
	{[]byte("debug"), slog.LevelDebug},
	{[]byte("warn"), slog.LevelWarn},
	{[]byte("error"), slog.LevelError},
	{[]byte("trace"), asyncbus.LevelTrace},
	{[]byte("warning"), slog.LevelWarn},
	{[]byte("fatal"), asyncbus.LevelFatal},
	{[]byte("panic"), asyncbus.LevelFatal},
	{[]byte("dpanic"), slog.LevelError},
	{[]byte("err"), slog.LevelError},
}

// levelNamed returns the level called name, in any case.
func levelNamed(name []byte) (slog.Level, bool) {
	for _, n := range lineLevelNames {
		if bytes.EqualFold(name, n.name) {
			return n.level, true
		}
	}
	return 0, false
}

// stdlogFatal names the standard log functions that end the program right
// after their one write: the Fatal functions call os.Exit, the Panic ones
// panic.
var stdlogFatal = map[string]bool{
	"log.Fatal": true, "log.Fatalf": true, "log.Fatalln": true,
	"log.Panic": true, "log.Panicf": true, "log.Panicln": true,
	"log.(*Logger).Fatal": true, "log.(*Logger).Fatalf": true, "log.(*Logger).Fatalln": true,
	"log.(*Logger).Panic": true, "log.(*Logger).Panicf": true, "log.(*Logger).Panicln": true,
}

// maxCallSites bounds callSites: past it, new call sites are resolved on
// every line and not kept.
const maxCallSites = 256

// callSites caches, per return address, whether a line without a level
// comes from a standard log function that ends the program. The map is
// never changed once published: readers load it with one atomic load and
// no lock, and a writer replaces it whole under mu.
var callSites struct {
	levels atomic.Pointer[map[uintptr]slog.Level] // copy-on-write; a reader sees a complete map
	mu     sync.Mutex                             // serialises the copies
}

// callerLevel is the level of a line without one, written by
// Writer.Write's caller: asyncbus.LevelFatal when that caller is the
// standard log package's output step called from log.Fatal, log.Panic or
// their variants (whose line is followed at once by os.Exit or a panic),
// slog.LevelInfo otherwise. It costs one short stack read and one map
// lookup; the call site is resolved to a name once.
func callerLevel() slog.Level {
	var pcs [2]uintptr
	// Skip runtime.Callers, callerLevel and Writer.Write: pcs[0] is the
	// writer's caller (log.(*Logger).output), pcs[1] its caller.
	if runtime.Callers(3, pcs[:]) < 2 {
		return slog.LevelInfo
	}
	if m := callSites.levels.Load(); m != nil { // atomic: the map it points to is never changed
		if l, ok := (*m)[pcs[1]]; ok {
			return l
		}
	}
	l := slog.LevelInfo
	frames := runtime.CallersFrames([]uintptr{pcs[0], pcs[1]}) // a copy: pcs itself stays on the stack
	out, _ := frames.Next()
	caller, _ := frames.Next()
	if out.Function == "log.(*Logger).output" && stdlogFatal[caller.Function] {
		l = asyncbus.LevelFatal
	}
	callSites.mu.Lock()
	defer callSites.mu.Unlock()
	old := callSites.levels.Load()
	if old != nil && len(*old) >= maxCallSites {
		return l
	}
	m := make(map[uintptr]slog.Level, 1+lenOf(old))
	if old != nil {
		for pc, lv := range *old {
			m[pc] = lv
		}
	}
	m[pcs[1]] = l
	callSites.levels.Store(&m) // atomic publish: m is complete and never written again
	return l
}

// lenOf is the length of the map m points to, 0 for nil.
func lenOf(m *map[uintptr]slog.Level) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
