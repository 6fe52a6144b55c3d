// Command asyncbus-bench shows what asyncbus does: it logs the reference
// ~200-byte access-log record through slog.Logger into a real temporary
// file with asyncbus (Block and Drop), with slog.JSONHandler writing
// straight to the file and through a bufio.Writer, and with a no-op
// handler (the floor slog's front end allows), at 1, 4 and 16 goroutines,
// and prints a table per goroutine count. It also writes results.md,
// results.json and chart.svg to the -out directory.
//
// Usage:
//
//	go run ./cmd/asyncbus-bench [flags]
//
// Run it with -help for the flags. The defaults finish in well under a
// minute on a 2-core machine.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usageHead = `asyncbus-bench measures asyncbus against the standard library's slog
handlers on the reference workload: N copies of a ~200-byte access-log
record, logged through slog.Logger into a real temporary file (removed
afterwards), split across G goroutines.

Figures per run: records/s end to end (until every byte is in the file),
ns per call, call latency P50/P99/P99.9/max, allocations and CPU time per
record, peak RSS, handler CPU while idle, and the lines actually found in
the file (lost = records - lines; dropped = what Drop mode's marker lines
report). Each run is repeated in alternation and the median reported;
each run executes in its own child process so that peak RSS is per run.

The defaults (200000 records, 3 repeats, 1/4/16 goroutines, 200ms idle
window) finish in under a minute on a 2-core machine.

Usage: go run ./cmd/asyncbus-bench [flags]

Flags:
`

// run is main without the exit: it returns 0 on success, 1 when a run
// failed or a record went missing, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	return newCLI().Main(args, stdout, stderr)
}

// newCLI returns the command: the harness's common flags plus -format,
// this command's contestants, and its output file names.
func newCLI() *harness.CLI {
	var format string
	return &harness.CLI{
		Name:       "asyncbus-bench",
		Usage:      usageHead,
		Title:      "asyncbus-bench results",
		DefaultOut: filepath.Join(os.TempDir(), "asyncbus-bench"),
		IdleUsage:  "how long each handler stays open and idle after its run while its CPU is measured (e.g. 10s for a steadier idle figure); 0 skips it",
		Names:      contestantNames(),
		Baseline:   baselineName,
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&format, "format", "json", "asyncbus output format: json, text, logfmt or console (the slog contestants use JSONHandler for json, TextHandler otherwise)")
		},
		Setup: func() ([]harness.Contestant, string, error) {
			all, err := contestants(format)
			return all, fmt.Sprintf("Format %s.", format), err
		},
		MayLose: mayDrop,
	}
}
