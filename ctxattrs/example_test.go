package ctxattrs_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/otelbridge"
)

func Example() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		// Trace IDs first (when ctx has a span), then the context's attrs.
		Context:     ctxattrs.Chain(otelbridge.TraceContext(otelbridge.StyleOTel), ctxattrs.Fields),
		ReplaceAttr: noTime,
	})
	defer h.Close()
	log := slog.New(h)

	ctx := ctxattrs.With(context.Background(), slog.String("request_id", "r-42"), slog.String("user", "ann"))
	log.InfoContext(ctx, "request started")

	// An inner With keeps the outer attributes; the inner value wins on a duplicate key.
	ctx = ctxattrs.With(ctx, slog.String("user", "bob"), slog.Int("attempt", 2))
	log.WarnContext(ctx, "retrying")
	// Output:
	// {"level":"INFO","msg":"request started","request_id":"r-42","user":"ann"}
	// {"level":"WARN","msg":"retrying","request_id":"r-42","user":"bob","attempt":2}
}
