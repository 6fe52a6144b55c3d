// Package ctxattrs carries slog attributes in a context.Context and writes
// them through asyncbus's Options.Features.Context hook, so that every record logged
// with that context (InfoContext, Log, LogAttrs, ...) carries them:
//
//	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
//	ctx = ctxattrs.With(ctx, slog.String("request_id", id))
//	slog.New(h).InfoContext(ctx, "handled") // {"...","request_id":"..."}
//
// The attributes are merged once, in With; the hook only walks a prepared
// slice, and allocates nothing, whether or not the context carries
// attributes (up to the eight fields a FieldWriter holds inline).
//
// Duplicate keys: a With on a context that already carries attributes
// keeps both sets, and on a duplicate top-level key the inner (later) value
// wins, in the position of the first. Groups are not merged: a group
// attribute replaces a group of the same key as a whole. An inlined group
// (slog.Group("", ...), which slog writes as its members) has no key of its
// own: its members are merged one by one, each by its own key, as if they
// had been passed to With directly, and From returns them so. Keys are not
// de-duplicated against the record's own attributes or against other hooks'
// fields (as in slog, both are written).
//
// WithLevel sets a per-request level in the context: the records logged with
// it are written down to that level, whatever the handler's own level.
package ctxattrs

import (
	"context"
	"log/slog"

	"github.com/asyncbus/asyncbus"
)

// Hook is the type of asyncbus.Options.Features.Context.
type Hook = func(ctx context.Context, w *asyncbus.FieldWriter)

// key is the context key; a zero-size unexported type cannot collide.
type key struct{}

// set is the value stored in a context: the merged attributes of every
// With on the chain. It is never modified after With returns it.
type set struct {
	attrs []slog.Attr
}

// With returns a context that carries attrs in addition to those ctx
// already carries; on a duplicate key the value given here wins. Empty
// attributes (slog.Attr{}) are ignored; the members of an inlined group
// (empty key) are taken one by one. With no (non-empty) attrs, ctx is
// returned unchanged. A nil ctx is treated as context.Background().
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	var outer []slog.Attr
	if s, ok := ctx.Value(key{}).(*set); ok {
		outer = s.attrs
	}
	merged := make([]slog.Attr, 0, len(outer)+len(attrs))
	merged = append(merged, outer...)
	merged, added := merge(merged, attrs)
	if !added {
		return ctx
	}
	return context.WithValue(ctx, key{}, &set{attrs: merged})
}

// merge adds attrs to merged: an empty attribute is skipped, an inlined
// group (a group with an empty key, which slog writes as its members) is
// merged member by member, and an attribute whose key merged already holds
// replaces it in place. added reports whether any attribute was merged.
func merge(merged, attrs []slog.Attr) (_ []slog.Attr, added bool) {
	for _, a := range attrs {
		if a.Equal(slog.Attr{}) {
			continue
		}
		if a.Key == "" && a.Value.Kind() == slog.KindGroup {
			var inner bool
			merged, inner = merge(merged, a.Value.Group())
			added = added || inner
			continue
		}
		added = true
		if i := indexKey(merged, a.Key); i >= 0 {
			merged[i] = a
			continue
		}
		merged = append(merged, a)
	}
	return merged, added
}

// indexKey returns the index of the attribute with key k in as, or -1.
func indexKey(as []slog.Attr, k string) int {
	for i := range as {
		if as[i].Key == k {
			return i
		}
	}
	return -1
}

// From returns the attributes ctx carries, in the order they are written.
// The slice is shared: callers must not modify it.
func From(ctx context.Context) []slog.Attr {
	if ctx == nil {
		return nil
	}
	if s, ok := ctx.Value(key{}).(*set); ok {
		return s.attrs
	}
	return nil
}

// Fields is an asyncbus.Options.Features.Context hook that writes the attributes
// carried by ctx (see With) as top-level fields. It allocates nothing.
func Fields(ctx context.Context, w *asyncbus.FieldWriter) {
	if ctx == nil {
		return // asyncbus never passes nil, but a direct caller might
	}
	s, ok := ctx.Value(key{}).(*set)
	if !ok {
		return
	}
	for _, a := range s.attrs {
		w.AddAttr(a)
	}
}

// Chain returns one Context hook that runs hooks in order, for example the
// trace IDs of otelbridge.TraceContext followed by Fields. Nil hooks are
// skipped; with none left Chain returns nil (no hook), with one it returns
// that hook itself.
func Chain(hooks ...Hook) Hook {
	var hs []Hook
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	switch len(hs) {
	case 0:
		return nil
	case 1:
		return hs[0]
	}
	return func(ctx context.Context, w *asyncbus.FieldWriter) {
		for _, h := range hs {
			h(ctx, w)
		}
	}
}
