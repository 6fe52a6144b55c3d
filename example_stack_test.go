package asyncbus_test

import (
	"log/slog"
	"os"
	"strings"

	"github.com/asyncbus/asyncbus"
)

// firstFrame keeps only the first frame's function of a stack trace (file
// paths differ between machines), and drops the time.
func firstFrame(groups []string, a slog.Attr) slog.Attr {
	if a.Key == "stacktrace" {
		fn, _, _ := strings.Cut(a.Value.String(), "\n")
		return slog.String(a.Key, fn+" ...")
	}
	return dropTime(groups, a)
}

func ExampleOptions_stackTraceLevel() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Features:    asyncbus.FeatureOptions{StackTraceLevel: slog.LevelError}, // nil (the default) is off
		ReplaceAttr: firstFrame,
	})
	log := slog.New(h)
	log.Warn("retrying")                  // below the level: no stack
	log.Error("giving up", "attempts", 3) // the stack of this call, in zap's format
	_ = h.Close()
	// Output:
	// {"level":"WARN","msg":"retrying"}
	// {"level":"ERROR","msg":"giving up","stacktrace":"github.com/asyncbus/asyncbus_test.ExampleOptions_stackTraceLevel ...","attempts":3}
}
