package logrbridge

import (
	"runtime"
	"strconv"
	"strings"
)

// formatStack renders pcs like zap's stacktrace field: "func\n\tfile:line"
// per frame, frames separated by newlines. Like zap, it leaves out the
// final frame when that is the runtime's goroutine entry (runtime.main or
// runtime.goexit), which says nothing about the program.
func formatStack(pcs []uintptr) string {
	if len(pcs) == 0 {
		return ""
	}
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	first := true
	for {
		f, more := frames.Next()
		if !more && !first && (f.Function == "runtime.goexit" || f.Function == "runtime.main") {
			break
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(f.Function)
		b.WriteString("\n\t")
		b.WriteString(f.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Line))
		if !more {
			break
		}
	}
	return b.String()
}

// stackFrom returns the current goroutine's stack starting at the frame whose
// PC is pc (a slog record's PC, taken by runtime.Callers too). When pc is 0
// or not found, it starts at stackFrom's caller.
func stackFrom(pc uintptr) string {
	var pcs [maxStack]uintptr
	n := runtime.Callers(2, pcs[:])
	start := 0
	if pc != 0 {
		for i := range n {
			if pcs[i] == pc {
				start = i
				break
			}
		}
	}
	return formatStack(pcs[start:n])
}
