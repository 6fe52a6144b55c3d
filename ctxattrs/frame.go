package ctxattrs

import (
	"context"
	"log/slog"
	"time"
)

// Frame is a context that carries one more attribute than its parent, as
// With's does, in memory its owner provides: a middleware that allocates
// its per-request state once embeds a Frame in it, and a request gets its
// attribute without the allocations With makes (three). Init it before use
// and once only; a Frame must not be copied after Init.
type Frame struct {
	parent context.Context
	s      set
	own    bool         // s holds f's attributes; false: the parent's are f's
	one    [1]slog.Attr // s.attrs when the parent carries none: no allocation
}

// Init makes f the context parent with a added, as With(parent, a) is, and
// returns it. When parent carries no attributes and a is a plain attribute
// (not an inlined group), Init allocates nothing; otherwise it merges as
// With does, in one allocation. A nil parent is treated as
// context.Background().
func (f *Frame) Init(parent context.Context, a slog.Attr) context.Context {
	if parent == nil {
		parent = context.Background()
	}
	f.parent = parent
	outer := From(parent)
	if len(outer) == 0 && a.Key != "" {
		f.one[0] = a
		f.s.attrs, f.own = f.one[:], true // never written again: a set is immutable
		return f
	}
	merged := make([]slog.Attr, 0, len(outer)+1)
	merged = append(merged, outer...)
	merged, f.own = merge(merged, []slog.Attr{a})
	f.s.attrs = merged
	return f
}

// Deadline returns the parent's deadline.
func (f *Frame) Deadline() (time.Time, bool) { return f.parent.Deadline() }

// Done returns the parent's Done channel.
func (f *Frame) Done() <-chan struct{} { return f.parent.Done() }

// Err returns the parent's error.
func (f *Frame) Err() error { return f.parent.Err() }

// Value returns f's attributes for With's key (what From and Fields read),
// and the parent's value for every other key.
func (f *Frame) Value(k any) any {
	if _, ours := k.(key); ours && f.own {
		return &f.s
	}
	return f.parent.Value(k)
}
