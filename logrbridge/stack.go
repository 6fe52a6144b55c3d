package logrbridge

import (
	"runtime"

	"github.com/asyncbus/asyncbus/internal/stack"
)

// formatStack renders pcs like zap's stacktrace field (internal/stack,
// shared with the root handler's Options.Features.StackTraceLevel).
func formatStack(pcs []uintptr) string { return stack.Format(pcs) }

// stackFrom returns the current goroutine's stack starting at the frame whose
// PC is pc (a slog record's PC). When pc is 0 or not found, it starts at
// stackFrom's caller.
func stackFrom(pc uintptr) string { return stack.From(pc, isStackFrom) }

// isStackFrom skips stackFrom's own frame when no pc is found.
func isStackFrom(f runtime.Frame) bool {
	return f.Function == "github.com/asyncbus/asyncbus/logrbridge.stackFrom"
}
