package harness

import (
	"cmp"
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
)

// CLI describes a benchmark command built on the harness: the flags every
// such command shares (-n, -goroutines, -repeat, -idle, -out, -contestants,
// -isolate, -sample-every, -quiet), its contestants, and hooks for what is
// specific to it. [CLI.Main] parses the flags, serves as the child process
// of isolated runs, runs the measurements and writes the report.
type CLI struct {
	// Name is the command's name: the flag set's name and the prefix of
	// its error messages ("name: ...").
	Name string
	// Usage is the help text printed before the flags' defaults.
	Usage string
	// Title heads results.md ("# Title").
	Title string
	// DefaultOut is the default of -out.
	DefaultOut string
	// DefaultN and DefaultRepeat are the defaults of -n and -repeat
	// (0: 200000 and 3).
	DefaultN, DefaultRepeat int
	// IdleUsage is the help text of -idle.
	IdleUsage string
	// Names lists every contestant's name, for -contestants' help text and
	// for the error when a filter matches none.
	Names []string
	// Baseline is the contestant the tables' ratio column divides by.
	Baseline string
	// Flags, if not nil, defines the command's own flags on fs before the
	// flags are parsed.
	Flags func(fs *flag.FlagSet)
	// Setup returns every contestant and the Label of the Results. It is
	// called once the flags are parsed and valid; an error is a bad flag
	// (exit status 2).
	Setup func() (all []Contestant, label string, err error)
	// BeforeRun, if not nil, is called just before the measurements start.
	BeforeRun func()
	// Report, if not nil, turns the results and their tables
	// (Results.Markdown(Baseline)) into the Markdown that is printed and
	// written to results.md; nil prints the tables alone.
	Report func(res *Results, tables string) string
	// AfterRun, if not nil, is called with the results once they are
	// printed and written, and only if nothing failed: every run succeeded,
	// the outputs were written and Problems found nothing (never in a
	// child process). An error fails the command (exit status 1).
	// compare's -readme uses it.
	AfterRun func(res *Results) error
	// MayLose reports whether a contestant may lose records; nil means
	// none may. See [Problems].
	MayLose func(name string) bool
	// MustAccount reports whether a contestant that loses records must
	// report each loss in drop markers; nil means all must. See [Problems].
	MustAccount func(name string) bool
}

// settings are the parsed common flags.
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
	shape       string
}

func (c *CLI) parseFlags(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if c.Flags != nil {
		c.Flags(fs)
	}
	fs.IntVar(&s.n, "n", cmp.Or(c.DefaultN, 200_000), "records per run")
	gs := fs.String("goroutines", "1,4,16", "comma-separated goroutine counts")
	fs.IntVar(&s.repeat, "repeat", cmp.Or(c.DefaultRepeat, 3), "runs per contestant and goroutine count; the median is reported")
	fs.DurationVar(&s.idle, "idle", 200*time.Millisecond, c.IdleUsage)
	fs.StringVar(&s.out, "out", c.DefaultOut, "directory for results.md, results.json and chart.svg (created if missing); empty writes nothing")
	fs.StringVar(&s.filter, "contestants", "", "comma-separated contestant names or parts of names to run (default all: "+strings.Join(c.Names, ", ")+")")
	fs.BoolVar(&s.isolate, "isolate", true, "run each measurement in a child process (per-run peak RSS, no heap carried between runs)")
	fs.IntVar(&s.sampleEvery, "sample-every", 1, "time every k-th call of each goroutine for the latency percentiles")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress line on stderr")
	fs.StringVar(&s.shape, "shape", ShapeReference, "the record logged: "+ShapeReference+" (the ~200-byte access-log line, 7 attributes) or "+
		ShapeStructs+" (~1 KB: a struct, ten structs with a time.Time each, a []string, a []int, a time.Time and an error)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), c.Usage)
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
	if err := checkShape(s.shape); err != nil {
		return s, fmt.Errorf("-shape: %w", err)
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
// all. names lists every contestant for the error when none matches.
func filterContestants(all []Contestant, filter string, names []string) ([]Contestant, error) {
	var parts []string
	for _, p := range strings.Split(filter, ",") {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return all, nil
	}
	var out []Contestant
	for _, c := range all {
		for _, p := range parts {
			if strings.Contains(strings.ToLower(c.Name), p) {
				out = append(out, c)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-contestants %q matches none of %s", filter, strings.Join(names, ", "))
	}
	return out, nil
}

// Main is the command's main without the exit: it parses args, serves as
// the child process when [IsChild] (so the command's TestMain and main may
// both just call it), runs the chosen contestants, prints the report to
// stdout, writes results.md, results.json and chart.svg to -out, and lists
// every [Problems] entry on stderr as a FAIL. It returns 0 on success, 1
// when a run failed, an output could not be written or a problem was found,
// and 2 on bad flags (0 for -help).
func (c *CLI) Main(args []string, stdout, stderr io.Writer) int {
	s, err := c.parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return 2
	}
	all, label, err := c.Setup()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return 2
	}
	if IsChild() {
		return ServeChild(all, stdout, stderr)
	}
	chosen, err := filterContestants(all, s.filter, c.Names)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := Config{
		Contestants: chosen,
		Goroutines:  s.goroutines,
		N:           s.n,
		Repeat:      s.repeat,
		Idle:        s.idle,
		SampleEvery: s.sampleEvery,
		Isolate:     s.isolate,
		ChildArgs:   args,
		Label:       label,
		Shape:       s.shape,
	}
	if !s.quiet {
		cfg.Progress = stderr
	}
	if c.BeforeRun != nil {
		c.BeforeRun()
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return 1
	}
	md := res.Markdown(c.Baseline)
	if c.Report != nil {
		md = c.Report(res, md)
	}
	fmt.Fprint(stdout, md)
	code := 0
	if s.out != "" {
		if err := writeOutputs(s.out, res, "# "+c.Title+"\n\n"+md); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
			code = 1
		} else {
			fmt.Fprintf(stdout, "\nWrote %s, %s and %s.\n",
				filepath.Join(s.out, "results.md"), filepath.Join(s.out, "results.json"), filepath.Join(s.out, "chart.svg"))
		}
	}
	problems := Problems(res, c.MayLose, c.MustAccount)
	for _, p := range problems {
		fmt.Fprintf(stderr, "%s: FAIL: %s\n", c.Name, p)
		code = 1
	}
	if c.AfterRun != nil && code == 0 {
		// Only a run that succeeded and was written is published.
		if err := c.AfterRun(res); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
			code = 1
		}
	}
	return code
}

// Problems lists what must never happen: a failed run, a lost record in a
// contestant that may not lose any (mayLose reports those that may; nil
// means none), a record lost by a contestant that must account for its
// losses (mustAccount; nil means every one) and is neither in the file nor
// reported by a drop marker, or a file that does not verify (torn,
// duplicated or foreign lines). Contestants that discard on purpose are
// only checked for the last.
func Problems(res *Results, mayLose, mustAccount func(name string) bool) []string {
	var out []string
	out = append(out, res.Failures...)
	for _, s := range res.Samples {
		where := fmt.Sprintf("%s at %d goroutines, run %d", s.Contestant, s.Goroutines, s.Rep)
		switch {
		case s.Discards:
		case s.Lost != 0 && (mayLose == nil || !mayLose(s.Contestant)):
			out = append(out, fmt.Sprintf("%s lost %d of %d records", where, s.Lost, s.N))
		case s.Unaccounted != 0 && (mustAccount == nil || mustAccount(s.Contestant)):
			out = append(out, fmt.Sprintf("%s: %d records neither in the file nor reported dropped", where, s.Unaccounted))
		}
		if !s.Count.Verified() {
			out = append(out, fmt.Sprintf("%s: file does not verify (%d duplicate, %d unparsed lines, %d unreadable markers)",
				where, s.Count.Duplicates, s.Count.Unparsed, s.Count.BadMarkers))
		}
	}
	return out
}

// writeOutputs writes results.md (md as given), results.json and chart.svg
// into dir, creating it if missing.
func writeOutputs(dir string, res *Results, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := res.JSON()
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"results.md":   []byte(md),
		"results.json": append(js, '\n'),
		"chart.svg":    res.SVG(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
