package ctxattrs

import (
	"context"
	"log/slog"

	"github.com/asyncbus/asyncbus/internal/reqlevel"
)

// WithLevel returns a context that lowers the level of every asyncbus
// handler to l for the records logged with it (InfoContext, DebugContext,
// Log, LogAttrs, and logrbridge loggers made with logrbridge.WithContext):
// one request can log at Debug while the rest of the program stays at Info.
//
// It only adds records: a record the handler writes anyway is written, and
// a level above the handler's hides nothing. It applies to every logger of
// the handler, whatever its rule in asyncbus.Options.Rules, and a record it
// lets through is written, not kept by the flight recorder. An inner
// WithLevel replaces an outer one, so a step of the request can be made
// quieter again. A nil ctx is treated as context.Background().
//
// A program that never calls WithLevel pays nothing for it; once it has, a
// record below a handler's level looks its context up (one ctx.Value).
func WithLevel(ctx context.Context, l slog.Level) context.Context {
	return reqlevel.With(ctx, l)
}

// Level returns the level set on ctx by WithLevel, if any.
func Level(ctx context.Context) (slog.Level, bool) {
	return reqlevel.From(ctx)
}
