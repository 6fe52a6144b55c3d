// Command ringpages measures the memory a fresh asyncbus handler touches
// while its drainer keeps up: it makes one handler (asyncbus, default, or
// slog.JSONHandler), logs records of one shape through slog.Logger into
// io.Discard from one goroutine, closes it, and prints the minor page
// faults the process took and how much its resident set grew from before
// the handler was made. Every page touched for the first time is one
// fault and one resident page; a ring cycled whole is all of it (2,048
// pages for the default 8 MiB). One handler per process, so that its
// memory comes from the OS, as in a program that makes one at start.
//
// Usage (from the benchmarks module):
//
//	go run ./cmd/ringpages [-handler asyncbus|slog] [-shape 1kb-attrs] [-n 100000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/cpurecord"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without the exit: 0 on success, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ringpages", flag.ContinueOnError)
	fs.SetOutput(stderr)
	handler := fs.String("handler", "asyncbus", "asyncbus or slog")
	shape := fs.String("shape", "1kb-attrs", "record shape (short, 1kb-attrs, 1kb-pairs, with)")
	n := fs.Int("n", 100_000, "records per handler")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	var s *cpurecord.Shape
	for _, x := range cpurecord.Shapes() {
		if x.Name == *shape {
			s = &x
		}
	}
	if s == nil || *n < 1 || (*handler != "asyncbus" && *handler != "slog") {
		fmt.Fprintf(stderr, "ringpages: unknown handler %q or shape %q, or n %d < 1\n", *handler, *shape, *n)
		return 2
	}
	f0, r0 := minorFaults(), residentKiB()
	var h slog.Handler = slog.NewJSONHandler(io.Discard, nil)
	done := func() {}
	if *handler == "asyncbus" {
		ah := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Format: asyncbus.JSON,
			Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
		h, done = ah, func() { _ = ah.Close() }
	}
	logN(h, *s, *n)
	done()
	fmt.Fprintf(stdout, "%s, %d %s records into io.Discard: %d minor page faults, resident set +%d KiB\n",
		*handler, *n, s.Name, minorFaults()-f0, residentKiB()-r0)
	return 0
}

// logN logs n records of s through h, from this goroutine.
func logN(h slog.Handler, s cpurecord.Shape, n int) {
	l := s.Prepare(slog.New(h))
	ctx := context.Background()
	for range n {
		s.Log(ctx, l)
	}
}

func minorFaults() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Minflt)
}

// residentKiB is VmRSS from /proc/self/status (0 where there is none).
func residentKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
