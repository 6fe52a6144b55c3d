// Command cpurecord measures the CPU each handler spends per record when
// the output costs nothing (io.Discard): slog.JSONHandler (the baseline),
// asyncbus in Block and Drop mode, zap, zerolog and phuslu/log, on four
// record shapes (a short message, the ~1 KB structs record with LogAttrs
// and with Info's pairs, and a record through a logger built with With),
// at 1 and 2 goroutines. CPU is the process's (getrusage), so a handler's
// own goroutines count; each ratio to slog is taken within one round, the
// contestants alternating.
//
// Usage (from the benchmarks module):
//
//	go run ./cmd/cpurecord [-rounds 5] [-goroutines 1,2] [-scale 1] [-shapes short,with] [-contestants slog,asyncbus]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus/benchmarks/cpurecord"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without the exit: 0 on success, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cpurecord", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds; the median of each figure and of each ratio is reported")
	gs := fs.String("goroutines", "1,2", "comma-separated goroutine counts")
	scale := fs.Float64("scale", 1, "multiplies the records per measurement (short 300k, 1kb-* 20k, with 100k)")
	shapes := fs.String("shapes", "", "comma-separated shapes to run (default all)")
	who := fs.String("contestants", "", "comma-separated parts of contestant names to run besides the baseline (default all)")
	quiet := fs.Bool("quiet", false, "no progress line on stderr")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	cfg := cpurecord.Config{Rounds: *rounds, Scale: *scale}
	for _, f := range strings.Split(*gs, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			fmt.Fprintf(stderr, "cpurecord: -goroutines: %q is not a positive integer\n", f)
			return 2
		}
		cfg.Goroutines = append(cfg.Goroutines, g)
	}
	for _, s := range cpurecord.Shapes() {
		if *shapes == "" || contains(*shapes, s.Name) {
			cfg.Shapes = append(cfg.Shapes, s)
		}
	}
	for _, c := range cpurecord.Contestants() {
		if *who == "" || c.Name == cpurecord.Baseline || contains(*who, c.Name) {
			cfg.Contestants = append(cfg.Contestants, c)
		}
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	t0 := time.Now()
	res, err := cpurecord.Run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "cpurecord: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "CPU per record into io.Discard, %s, %d logical CPUs, GOMAXPROCS %d, %s; %d rounds, scale %g, took %v.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(),
		*rounds, *scale, time.Since(t0).Round(time.Second))
	fmt.Fprint(stdout, res.Markdown())
	return 0
}

// contains reports whether one of the comma-separated parts of list is a
// part of name.
func contains(list, name string) bool {
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" && strings.Contains(name, p) {
			return true
		}
	}
	return false
}
