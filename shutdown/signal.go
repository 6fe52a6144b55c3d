package shutdown

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"
)

// OnSignal closes every open handler (CloseAll, within bound; 0 means
// DefaultBound) when the process receives one of sigs (when none is named,
// SIGTERM on Unix and os.Interrupt elsewhere), then sends
// the process the same signal again, so that it does what it would have
// done without OnSignal: with no other signal.Notify for it, end the
// process as killed by that signal (exit status 143 in a shell for
// SIGTERM). Where a signal cannot be sent to oneself (Windows, Plan 9),
// the process exits with status 1 instead. CloseAll's error, if any, is
// written to standard error first.
//
// A second signal while the handlers close is not caught: it ends the
// process at once. Records logged after the handlers closed are refused
// (asyncbus.ErrClosed) and counted.
//
// OnSignal takes sigs for itself: a program that handles them too (such
// as controller-runtime's SetupSignalHandler, which shuts the manager down
// gracefully on the first SIGTERM) would receive the signal a second time
// and exit early; such a program should close its handlers when its
// shutdown ends instead (defer shutdown.CloseAll in main).
//
// stop undoes OnSignal: it stops catching sigs and returns once a close
// already begun has ended (without sending the signal again if stop came
// first).
func OnSignal(bound time.Duration, sigs ...os.Signal) (stop func()) {
	return onSignal(bound, os.Stderr, sigs)
}

// onSignal is OnSignal reporting to report.
func onSignal(bound time.Duration, report io.Writer, sigs []os.Signal) (stop func()) {
	if bound <= 0 {
		bound = DefaultBound
	}
	if len(sigs) == 0 {
		sigs = defaultSignals
	}
	caught := make(chan os.Signal, 1) // buffered, as signal.Notify requires: a signal is never missed
	signal.Notify(caught, sigs...)
	stopped := make(chan struct{})
	var done sync.WaitGroup
	done.Go(func() {
		select {
		case sig := <-caught:
			signal.Stop(caught) // a second signal now does what it would do without OnSignal
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			err := CloseAll(ctx)
			cancel()
			if err != nil {
				fmt.Fprintf(report, "asyncbus/shutdown: on %v: %v\n", sig, err)
			}
			raise(sig)
		case <-stopped:
			signal.Stop(caught)
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(stopped) })
		done.Wait()
	}
}
