// Command compare measures asyncbus side by side with its peers on the
// reference workload: N copies of the ~200-byte access-log record, logged
// through slog.Logger into a real temporary file, split across G goroutines
// (1, 4 and 16 by default). The contestants are those of package
// github.com/asyncbus/asyncbus/benchmarks/contestants: the standard
// library's slog.JSONHandler (straight and through bufio), the seeds'
// mutex-per-write and channel+bufio (LAW) baselines, zap, zerolog, phuslu/log,
// asyncbus in Block and Drop mode, and a no-op handler.
//
// It prints one table per goroutine count and the targets, and
// writes results.md, results.json and chart.svg to the -out directory.
//
// Usage (from the benchmarks module):
//
//	go run ./cmd/compare [flags]
//	go run ./cmd/compare -n 200000 -repeat 3
//
// Run it with -help for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/internal/benchharness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// settings are the parsed flags.
type settings struct {
	n           int
	goroutines  []int
	repeat      int
	idle        time.Duration
	out         string
	filter      string
	isolate     bool
	sampleEvery int
	quiet       bool
}

const usageHead = `compare measures asyncbus against slog, zap, zerolog, phuslu/log and the
seeds' baselines on the reference workload: N copies of a ~200-byte
access-log record, logged through slog.Logger into a real temporary file
(removed afterwards), split across G goroutines.

Figures per run: records/s end to end (until every byte is in the file),
ns per call, call latency P50/P99/P99.9/max, allocations and CPU time per
record, peak RSS, CPU while idle, and the lines actually found in the file
(lost = records - lines; dropped = what asyncbus's drop markers report).
Each run is repeated in alternation and the median reported; each run
executes in its own child process so that peak RSS is per run.

Usage: go run ./cmd/compare [flags]

Flags:
`

func parseFlags(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&s.n, "n", 200_000, "records per run")
	gs := fs.String("goroutines", "1,4,16", "comma-separated goroutine counts")
	fs.IntVar(&s.repeat, "repeat", 3, "runs per contestant and goroutine count; the median is reported")
	fs.DurationVar(&s.idle, "idle", 200*time.Millisecond, "how long each handler stays open and idle after its run while the process CPU is measured; 0 skips it")
	fs.StringVar(&s.out, "out", "results", "directory for results.md, results.json and chart.svg (created if missing); empty writes nothing")
	fs.StringVar(&s.filter, "contestants", "", "comma-separated contestant names or parts of names to run (default all: "+strings.Join(contestants.Names(), ", ")+")")
	fs.BoolVar(&s.isolate, "isolate", true, "run each measurement in a child process (per-run peak RSS, no heap carried between runs)")
	fs.IntVar(&s.sampleEvery, "sample-every", 1, "time every k-th call of each goroutine for the latency percentiles")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress line on stderr")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	if s.goroutines, err = parseInts(*gs); err != nil {
		return s, fmt.Errorf("-goroutines: %w", err)
	}
	switch {
	case s.n < 1:
		return s, fmt.Errorf("-n must be at least 1, got %d", s.n)
	case s.repeat < 1:
		return s, fmt.Errorf("-repeat must be at least 1, got %d", s.repeat)
	case s.idle < 0:
		return s, fmt.Errorf("-idle must not be negative, got %v", s.idle)
	case s.sampleEvery < 1:
		return s, fmt.Errorf("-sample-every must be at least 1, got %d", s.sampleEvery)
	}
	for _, g := range s.goroutines {
		if g > s.n {
			return s, fmt.Errorf("-goroutines: %d goroutines for %d records", g, s.n)
		}
	}
	return s, nil
}

// parseInts parses "1,4,16" into distinct positive ints, in order.
func parseInts(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no goroutine counts")
	}
	return out, nil
}

// filterContestants keeps the contestants whose name contains one of the
// comma-separated parts of filter (case-insensitive); an empty filter keeps
// all.
func filterContestants(all []benchharness.Contestant, filter string) ([]benchharness.Contestant, error) {
	var parts []string
	for _, p := range strings.Split(filter, ",") {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return all, nil
	}
	var out []benchharness.Contestant
	for _, c := range all {
		for _, p := range parts {
			if strings.Contains(strings.ToLower(c.Name), p) {
				out = append(out, c)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-contestants %q matches none of %s", filter, strings.Join(contestants.Names(), ", "))
	}
	return out, nil
}

// run is main without the exit: it returns 0 on success, 1 when a run
// failed or a record went missing where it must not, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	s, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "compare: %v\n", err)
		return 2
	}
	all := contestants.All()
	if benchharness.IsChild() {
		return benchharness.ServeChild(all, stdout, stderr)
	}
	chosen, err := filterContestants(all, s.filter)
	if err != nil {
		fmt.Fprintf(stderr, "compare: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := benchharness.Config{
		Contestants: chosen,
		Goroutines:  s.goroutines,
		N:           s.n,
		Repeat:      s.repeat,
		Idle:        s.idle,
		SampleEvery: s.sampleEvery,
		Isolate:     s.isolate,
		ChildArgs:   args,
		Label:       "Format JSON.",
	}
	if !s.quiet {
		cfg.Progress = stderr
	}
	loadBefore := loadAverage()
	res, err := benchharness.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "compare: %v\n", err)
		return 1
	}
	env := describeRun(res, loadBefore, loadAverage())
	md := env + "\n" + res.Markdown(contestants.Baseline) + "\n" + notes(res) + "\n" + targets(res)
	fmt.Fprint(stdout, md)
	code := 0
	if s.out != "" {
		if err := writeOutputs(s.out, res, md); err != nil {
			fmt.Fprintf(stderr, "compare: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(stdout, "\nWrote %s, %s and %s.\n",
				filepath.Join(s.out, "results.md"), filepath.Join(s.out, "results.json"), filepath.Join(s.out, "chart.svg"))
		}
	}
	for _, p := range problems(res) {
		fmt.Fprintf(stderr, "compare: FAIL: %s\n", p)
		code = 1
	}
	return code
}

// problems lists what must never happen: a failed run, a lost record in a
// contestant that must not lose any, a record of asyncbus-drop neither in
// the file nor reported by a drop marker, or a file that does not verify
// (torn, duplicated or foreign lines). zerolog-diode's losses are reported
// in the tables, not counted as problems: losing records is its design.
func problems(res *benchharness.Results) []string {
	var out []string
	out = append(out, res.Failures...)
	for _, s := range res.Samples {
		where := fmt.Sprintf("%s at %d goroutines, run %d", s.Contestant, s.Goroutines, s.Rep)
		switch {
		case s.Discards:
		case s.Lost != 0 && !contestants.MayLose(s.Contestant):
			out = append(out, fmt.Sprintf("%s lost %d of %d records", where, s.Lost, s.N))
		case s.Unaccounted != 0 && contestants.MustAccount(s.Contestant):
			out = append(out, fmt.Sprintf("%s: %d records neither in the file nor reported dropped", where, s.Unaccounted))
		}
		if !s.Count.Verified() {
			out = append(out, fmt.Sprintf("%s: file does not verify (%d duplicate, %d unparsed lines, %d unreadable markers)",
				where, s.Count.Duplicates, s.Count.Unparsed, s.Count.BadMarkers))
		}
	}
	return out
}

func writeOutputs(dir string, res *benchharness.Results, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := res.JSON()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"results.md":   []byte("# asyncbus side-by-side benchmark results\n\n" + md),
		"results.json": append(js, '\n'),
		"chart.svg":    res.SVG(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
