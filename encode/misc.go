package encode

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"unsafe"
)

// bytesToString returns a string that shares b's memory, without copying.
// It is used only for transient, read-only views of a state's key prefix
// (passed to needsQuoting and strconv.AppendQuote, which do not retain it)
// while the prefix is not modified; the string never outlives the call.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

const (
	levelTabMin = -24
	levelTabMax = 28
)

// levelNames caches slog's Level.String() for common levels (offset
// spellings such as "DEBUG-4" would otherwise allocate per record), plus a
// lower-case copy for logfmt.
var levelNames, levelNamesLower = func() (up, low [levelTabMax - levelTabMin + 1]string) {
	for i := range up {
		up[i] = slog.Level(i + levelTabMin).String()
		low[i] = strings.ToLower(up[i])
	}
	return
}()

// levelName returns the spelling of l for this encoder's format.
func (c *config) levelName(l slog.Level) string {
	lower := c.format == Logfmt
	if !c.slogLevels {
		switch l {
		case LevelTrace:
			if lower {
				return "trace"
			}
			return "TRACE"
		case LevelFatal:
			if lower {
				return "fatal"
			}
			return "FATAL"
		}
	}
	if l >= levelTabMin && l <= levelTabMax {
		if lower {
			return levelNamesLower[l-levelTabMin]
		}
		return levelNames[l-levelTabMin]
	}
	if lower {
		return strings.ToLower(l.String())
	}
	return l.String()
}

// srcEntry is the resolved, pre-formatted source position of one PC.
type srcEntry struct {
	pc       uintptr
	src      slog.Source
	fileLine string // "file:line", as slog's TextHandler writes it
	short    string // last directory and file plus ":line", for Console
}

// srcCache is a direct-mapped cache of resolved PCs. Each slot holds an
// immutable *srcEntry published with an atomic Store, so a reader sees
// either an old complete entry or a new complete one; a collision only
// costs a re-resolution.
var srcCache [1024]atomic.Pointer[srcEntry]

// sourceFor returns the source of pc, or nil if pc is 0 or unresolvable.
func sourceFor(pc uintptr) *srcEntry {
	if pc == 0 {
		return nil
	}
	slot := &srcCache[(pc>>2^pc>>12)%uintptr(len(srcCache))]
	if e := slot.Load(); e != nil && e.pc == pc {
		if e.src == (slog.Source{}) {
			return nil
		}
		return e
	}
	r := slog.NewRecord(zeroTime, 0, "", pc)
	e := &srcEntry{pc: pc, src: *r.Source()}
	e.fileLine = fmt.Sprintf("%s:%d", e.src.File, e.src.Line)
	e.short = fmt.Sprintf("%s:%d", shortFile(e.src.File), e.src.Line)
	slot.Store(e)
	if e.src == (slog.Source{}) {
		return nil
	}
	return e
}

func shortFile(f string) string {
	i := strings.LastIndexByte(f, '/')
	if i < 0 {
		return f
	}
	if j := strings.LastIndexByte(f[:i], '/'); j >= 0 {
		return f[j+1:]
	}
	return f
}
