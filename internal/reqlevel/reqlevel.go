// Package reqlevel carries a per-request log level in a context.Context:
// package ctxattrs sets it (WithLevel) and the root handler reads it, which
// cannot import ctxattrs (ctxattrs imports the root).
//
// A process that never sets a level pays one load of a flag that is never
// written per lookup: Allows reads the context only once some With has run.
package reqlevel

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// key is the context key; a zero-size unexported type cannot collide.
type key struct{}

// used is set by the first With of the process and only cleared by Forget.
// Every disabled log call reads it: With stores only when it is not yet
// set, so that the cache line stays shared (read-only) after the first call.
var used atomic.Bool

// With returns a context that carries level l; an inner With replaces an
// outer one. A nil ctx is treated as context.Background().
func With(ctx context.Context, l slog.Level) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if !used.Load() {
		// Stored before the context exists: a goroutine handed the context
		// (which needs a happens-before edge) sees the flag set.
		used.Store(true)
	}
	return context.WithValue(ctx, key{}, l)
}

// Used reports whether any With has run in this process (since Forget). It
// is one atomic load, inlined.
func Used() bool { return used.Load() }

// From returns the level ctx carries, if any. It reads ctx even when Used
// is false.
func From(ctx context.Context) (slog.Level, bool) {
	if ctx == nil {
		return 0, false
	}
	l, ok := ctx.Value(key{}).(slog.Level)
	return l, ok
}

// Allows reports whether ctx carries a level at or below l: the request
// asks for records at l. Without any With in the process it does not look
// at ctx.
func Allows(ctx context.Context, l slog.Level) bool {
	if !used.Load() {
		return false
	}
	v, ok := From(ctx)
	return ok && l >= v
}

// Forget marks request levels unused again, as at start, so that benchmarks
// can measure the path of a process that never sets one. Contexts that carry
// a level are ignored until the next With.
func Forget() { used.Store(false) }
