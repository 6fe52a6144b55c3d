package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/asyncbus/asyncbus"
)

// probeEnv names a directory: when set, each server records where its
// goroutines blocked (the runtime's block profile, every blocking event of
// 1 ms or more, written there as block-BACKEND-PID.pprof when the load
// stops) and prints a "slowcall" line on stderr for every log call that
// took over slowCall, with the handler's queue depth after it. It says
// which wait held a slow call, without touching the library.
const probeEnv = "SERVICEBENCH_PROBE"

// slowCall is the time from which a log call is reported: by default
// above the quiet wait's 20 ms bound, so each one is the Error wait, a
// wait for room, or a goroutine that did not get a processor.
// SERVICEBENCH_PROBE_SLOW (a duration) lowers it, to see quiet waits too.
var slowCall = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(probeSlowEnv)); err == nil && d > 0 {
		return d
	}
	return 25 * time.Millisecond
}()

// probeSlowEnv names slowCall's override.
const probeSlowEnv = "SERVICEBENCH_PROBE_SLOW"

// probeStart is when the server process started: slow calls report the
// time since, so that a start-up episode shows as such.
var probeStart = time.Now()

// startProbe turns the block profile on when the probe is asked for and
// returns the function that writes it (nil when it is not).
func startProbe(backend string) func() {
	dir := os.Getenv(probeEnv)
	if dir == "" {
		return nil
	}
	runtime.SetBlockProfileRate(int(time.Millisecond))
	return func() {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("block-%s-%d.pprof", backend, os.Getpid())))
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			return
		}
		defer f.Close()
		if err := pprof.Lookup("block").WriteTo(f, 0); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
		}
	}
}

// probeHandler times each Handle of next and reports the slow ones.
type probeHandler struct {
	next slog.Handler
	ab   *asyncbus.Handler // nil for the peers: no queue depth
}

func (p probeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return p.next.Enabled(ctx, l)
}

func (p probeHandler) Handle(ctx context.Context, r slog.Record) error {
	var before uint64 // the queue depth before the call: what a wait had ahead of it
	if p.ab != nil && r.Level >= slog.LevelError {
		before = p.ab.Stats().QueueDepth
	}
	t := time.Now()
	err := p.next.Handle(ctx, r)
	if d := time.Since(t); d > slowCall {
		depth, capacity := uint64(0), uint64(0)
		if p.ab != nil {
			st := p.ab.Stats()
			depth, capacity = st.QueueDepth, st.Capacity
		}
		ahead := "" // read for Error records only: a Stats call per record would weigh on the benchmark
		if r.Level >= slog.LevelError {
			ahead = fmt.Sprintf(" depth-before=%d", before)
		}
		fmt.Fprintf(os.Stderr, "slowcall level=%v dur=%v since-start=%v%s depth-after=%d capacity=%d err=%v\n",
			r.Level, d.Round(time.Microsecond), time.Since(probeStart).Round(time.Millisecond), ahead, depth, capacity, err)
	}
	return err
}

func (p probeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return probeHandler{next: p.next.WithAttrs(as), ab: p.ab}
}

func (p probeHandler) WithGroup(name string) slog.Handler {
	return probeHandler{next: p.next.WithGroup(name), ab: p.ab}
}
