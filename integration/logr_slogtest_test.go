package integration

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/logrbridge"
)

// TestLogrSlogtest runs testing/slogtest on logr.ToSlogHandler of a
// logrbridge logger, at V(0) and V(2) (records then sit two levels lower),
// over the standard JSON handler and over asyncbus.
func TestLogrSlogtest(t *testing.T) {
	for _, backend := range []string{"slog.JSONHandler", "asyncbus"} {
		for _, v := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/V(%d)", backend, v), func(t *testing.T) {
				var buf logrBuffer
				var h slog.Handler
				flush := func() {}
				if backend == "asyncbus" {
					ah := asyncbus.NewHandler(&buf, &asyncbus.Options{Level: slog.Level(-10)})
					defer func() { require.NoError(t, ah.Close()) }()
					h, flush = ah, func() { require.NoError(t, ah.Flush()) }
				} else {
					h = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-10)})
				}
				l := logrbridge.NewLogger(h).V(v)
				require.NoError(t, slogtest.TestHandler(logr.ToSlogHandler(l), func() []map[string]any {
					flush()
					return logrLines(t, buf.String())
				}))
			})
		}
	}
}
