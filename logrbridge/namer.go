package logrbridge

import (
	"log/slog"

	"github.com/asyncbus/asyncbus"
)

// asyncNamer is the naming method of asyncbus handlers (*asyncbus.Handler
// and anything embedding it).
type asyncNamer interface {
	Named(name string) *asyncbus.Handler
}

// nativeNamer returns a namer using h's Named method when h has one, so
// that logr names are asyncbus logger names (per-logger level rules apply).
func nativeNamer(h slog.Handler) func(slog.Handler, string) slog.Handler {
	if _, ok := h.(asyncNamer); !ok {
		return nil
	}
	return func(root slog.Handler, name string) slog.Handler {
		if n, ok := root.(asyncNamer); ok {
			return n.Named(name)
		}
		return root.WithAttrs([]slog.Attr{slog.String(DefaultNameKey, name)})
	}
}
