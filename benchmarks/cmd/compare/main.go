// Command compare measures asyncbus side by side with its peers on the
// reference workload: N copies of the ~200-byte access-log record, logged
// through slog.Logger into a real temporary file, split across G goroutines
// (1, 4 and 16 by default). The contestants are those of package
// github.com/asyncbus/asyncbus/benchmarks/contestants: the standard
// library's slog.JSONHandler (straight and through bufio), the seeds'
// mutex-per-write and channel+bufio (LAW) baselines, zap, zerolog, phuslu/log,
// asyncbus in Block and Drop mode, and a no-op handler.
//
// It prints the README's comparison table, one table per goroutine count
// and the targets, and writes results.md, results.json and chart.svg to the
// -out directory (a temporary one by default, so that a first run leaves
// the committed results alone).
//
// Its defaults are a quick look (50,000 records, 3 alternating repeats):
// from the repository's root, go run -C benchmarks ./cmd/compare. The
// published figures take more records and repeats:
//
//	go run ./cmd/compare [flags]
//	go run ./cmd/compare -n 300000 -repeat 7 -out results -readme ../README.md
//
// Run it with -help for the flags.
package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
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

// run is main without the exit: it returns 0 on success, 1 when a run
// failed or a record went missing where it must not, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	return newCLI().Main(args, stdout, stderr)
}

// newCLI returns the command: the harness's common flags, the contestants
// of package contestants, and a report that adds the machine and load,
// notes on zerolog's losses and the targets to the tables.
//
// zerolog-diode's losses are reported in the tables, not counted as
// problems: losing records is its design (contestants.MayLose and
// contestants.MustAccount).
func newCLI() *harness.CLI {
	var loadBefore, readme string
	return &harness.CLI{
		Name:       "compare",
		Usage:      usageHead,
		Title:      "asyncbus side-by-side benchmark results",
		DefaultOut: filepath.Join(os.TempDir(), "asyncbus-compare"),
		// A quick look by default (the first command a newcomer runs):
		// every contestant, 1, 4 and 16 goroutines, in well under a
		// minute; the published figures pass -n and -repeat.
		DefaultN:      50_000,
		DefaultRepeat: 3,
		IdleUsage:     "how long each handler stays open and idle after its run while the process CPU is measured; 0 skips it",
		Names:         contestants.Names(),
		Baseline:      contestants.Baseline,
		Setup: func() ([]harness.Contestant, string, error) {
			return contestants.All(), "Format JSON.", nil
		},
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&readme, "readme", "", "a README whose comparison table (between the "+tableBegin+" and "+tableEnd+" lines) is replaced with this run's, if the run had no failure; empty leaves it alone")
		},
		BeforeRun: func() { loadBefore = loadAverage() },
		AfterRun: func(res *harness.Results) error {
			if readme == "" {
				return nil
			}
			return updateReadme(readme, res)
		},
		Report: func(res *harness.Results, tables string) string {
			env := describeRun(res, loadBefore, loadAverage())
			return env + "\n" + readmeTable(res) + "\n" + tables + "\n" + notes(res) + "\n" + targets(res)
		},
		MayLose:     contestants.MayLose,
		MustAccount: contestants.MustAccount,
	}
}
