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
		Features:    asyncbus.FeatureOptions{Context: ctxattrs.Chain(otelbridge.TraceContext(otelbridge.StyleOTel), ctxattrs.Fields)},
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

// One request logs at Debug while the handler stays at Info.
func ExampleWithLevel() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}, ReplaceAttr: noTime})
	defer h.Close()
	log := slog.New(h)

	quiet := ctxattrs.With(context.Background(), slog.String("request_id", "r-1"))
	log.DebugContext(quiet, "cache miss") // below Info: not written

	// A request marked for debugging, say by a header or an annotation.
	loud := ctxattrs.WithLevel(ctxattrs.With(context.Background(), slog.String("request_id", "r-2")), slog.LevelDebug)
	log.DebugContext(loud, "cache miss")
	log.InfoContext(loud, "handled")
	// Output:
	// {"level":"DEBUG","msg":"cache miss","request_id":"r-2"}
	// {"level":"INFO","msg":"handled","request_id":"r-2"}
}

// A middleware's per-request state embeds a Frame: the request's context
// gets its id attribute without an allocation of its own.
func ExampleFrame() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: noTime, Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
	defer h.Close()
	log := slog.New(h)

	type requestState struct {
		attrs ctxattrs.Frame
		// the middleware's other per-request fields
	}
	st := &requestState{}
	ctx := st.attrs.Init(context.Background(), slog.String("request_id", "r-7"))
	log.InfoContext(ctx, "handled")
	// Output:
	// {"level":"INFO","msg":"handled","request_id":"r-7"}
}
