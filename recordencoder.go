package asyncbus

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/asyncbus/asyncbus/internal/plug"
)

// This file lets sink packages of this module (otlpsink) run their own
// caller-side encoder through internal/plug, so the public API does not grow.

func init() {
	plug.Bound = func(h any, ctx context.Context) any {
		ah, ok := h.(*Handler)
		if !ok {
			return nil
		}
		h2 := *ah
		h2.bound = ctx
		return &h2
	}
	plug.Grouped = func(h any) bool {
		ah, ok := h.(*Handler)
		return ok && ah.grouped
	}
	plug.NewHandler = func(w io.Writer, opts any, enc plug.Encoder) (any, error) {
		o, ok := opts.(*Options)
		if !ok && opts != nil {
			return nil, fmt.Errorf("asyncbus: plug.NewHandler: options of type %T", opts)
		}
		if enc == nil {
			return nil, fmt.Errorf("asyncbus: plug.NewHandler: nil encoder")
		}
		h, err := newHandler(w, o, true)
		if err != nil {
			return nil, err
		}
		h.rec = enc // before h is shared
		if c, ok := w.(plug.Closer); ok {
			h.core.closing = c.Closing
		}
		if r, ok := w.(plug.Reporter); ok {
			r.SetReport(h.core.bus.Report)
		}
		return h, nil
	}
}

// handleRecord is Handle for a handler with a plugged record encoder.
func (h *Handler) handleRecord(ctx context.Context, r slog.Record) error {
	b := bufPool.Get().(*buffer)
	b.data = h.rec.AppendRecord(b.data[:0], ctx, r, h.name, h.contextFields(ctx, b))
	return h.enqueue(b, r.Level)
}

// notifyClosing tells a plugged sink that Close began, with Close's context.
func (c *core) notifyClosing(ctx context.Context) {
	if c.closing != nil {
		c.closing(ctx)
	}
}
