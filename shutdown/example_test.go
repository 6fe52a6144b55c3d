package shutdown_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/sampling"
	"github.com/asyncbus/asyncbus/shutdown"
)

// noTime drops the time so that the output is the same on every run.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// A handler held only inside a sampling.Handler inside a MultiHandler,
// which CloseDefault cannot reach, closed with every other handler of the
// process.
func ExampleCloseAll() {
	console := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Format: asyncbus.Text, ReplaceAttr: noTime})
	var auditLog bytes.Buffer // read only after CloseAll: the drainer writes it
	audit := asyncbus.NewHandler(&auditLog, &asyncbus.Options{Format: asyncbus.Logfmt, ReplaceAttr: noTime})
	sampled, err := sampling.NewHandler(console, sampling.Config{First: 10, Thereafter: 10})
	if err != nil {
		panic(err)
	}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewMultiHandler(sampled, audit)))
	slog.Info("started", "pid", "1")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdown.CloseAll(ctx); err != nil { // audit, then console: the newest first
		fmt.Fprintln(os.Stderr, "log:", err)
	}
	fmt.Print("audit: ", auditLog.String())
	// Output:
	// level=INFO msg=started pid=1
	// audit: level=info msg=started pid=1
}

// A program that never calls Close: SIGTERM (a pod's stop) closes every
// handler, within 10 s, before the process ends as killed by SIGTERM.
func ExampleOnSignal() {
	stop := shutdown.OnSignal(10 * time.Second) // SIGTERM on Unix
	defer stop()                                // for a program that closes its handlers itself after all

	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Format: asyncbus.Logfmt, ReplaceAttr: noTime})
	slog.New(h).Info("serving")
	// ... the process runs until a SIGTERM ends it.
	if err := shutdown.CloseAll(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "log:", err)
	}
	// Output:
	// level=info msg=serving
}
