package asyncbus

import (
	"context"
	"log/slog"

	"github.com/asyncbus/asyncbus/internal/reqlevel"
)

// requested reports whether ctx carries a per-request level (set with
// ctxattrs.WithLevel) that lets records at l through. It only lowers the
// threshold: records the handler writes anyway never read ctx, and a process
// that never sets a request level pays one load of a flag (inlined) here.
//
// A request level applies to every handler of the tree, whatever its
// logger's rule in Options.Rules, and a record it lets through is written,
// not kept by the flight recorder.
func requested(ctx context.Context, l slog.Level) bool {
	return reqlevel.Used() && reqlevel.Allows(ctx, l)
}
