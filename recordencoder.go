package asyncbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asyncbus/asyncbus/internal/core"
)

// This file gives the module's bridges and sinks (otelbridge, otlpsink,
// logwriter) their typed entry points into the handler through
// internal/core, so the public API does not grow.

func init() {
	core.Register(core.Root{
		Install: func(h slog.Handler, enc core.Encoder) error {
			ah, ok := h.(*Handler)
			switch {
			case !ok:
				return fmt.Errorf("asyncbus: core.Install on a %T", h)
			case enc == nil:
				return errors.New("asyncbus: core.Install with a nil encoder")
			case ah.tree.recorder != nil:
				return errors.New("asyncbus: Options.FlightRecorder is not available with a sink that encodes records itself")
			}
			ah.plug(enc) // before ah is shared
			if c, ok := ah.tree.out.(core.Closer); ok {
				ah.tree.closing = c.Closing
			}
			if r, ok := ah.tree.out.(core.Reporter); ok {
				r.SetReport(ah.tree.bus.Report)
			}
			if bl, ok := ah.tree.out.(core.Backlogger); ok {
				bl.SetBacklog(ah.tree.bus.Backlog)
			}
			return nil
		},
		Bound: func(h slog.Handler, ctx context.Context) slog.Handler {
			ah, ok := h.(*Handler)
			if !ok {
				return nil
			}
			h2 := *ah
			h2.bound = ctx
			return &h2
		},
		Grouped: func(h slog.Handler) bool {
			ah, ok := h.(*Handler)
			return ok && ah.grouped
		},
		HandleAttrs: func(h slog.Handler, ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) (bool, error) {
			ah, ok := h.(*Handler)
			if !ok {
				return false, nil
			}
			return true, ah.handleAttrs(ctx, t, level, msg, attrs)
		},
		WriteLine: func(h slog.Handler, level slog.Level, line []byte) (bool, error) {
			ah, ok := h.(*Handler)
			if !ok {
				return false, nil
			}
			return true, ah.writeLine(level, line)
		},
		SyncBounded: func(h slog.Handler) error {
			ah, ok := h.(*Handler)
			if !ok {
				return fmt.Errorf("asyncbus: core.SyncBounded on a %T", h)
			}
			return ah.syncBounded(context.Background())
		},
	})
}

// notifyClosing tells a plugged sink that Close began, with Close's
// context, and returns when the sink will have given up, if it has one.
func (c *tree) notifyClosing(ctx context.Context) (time.Time, bool) {
	if c.closing == nil {
		return time.Time{}, false
	}
	return c.closing(ctx), true
}
