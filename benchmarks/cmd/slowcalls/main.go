// Command slowcalls times every call of one goroutine that logs the
// reference record (the comparison command's, ~200 bytes, 7 attributes)
// through slog.Logger into a temporary file, with one of the comparison
// command's contestants, in a fresh process. It prints how many calls took
// longer than -over, per tenth of the run, and the commonest gaps (in
// calls) between two slow calls: a gap that matches a page's worth of
// records, or of the record's heap garbage, points at first-touch page
// faults (see benchmarks/results/faults-2026-12-06.md).
//
// Usage (from the benchmarks module):
//
//	go run ./cmd/slowcalls [-contestant asyncbus-block] [-n 100000] [-over 10µs]
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without the exit: 0 on success, 1 on a failed run, 2 on bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("slowcalls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("contestant", contestants.AsyncbusBlock, "a contestant of the comparison command")
	n := fs.Int("n", 100_000, "records")
	over := fs.Duration("over", 10*time.Microsecond, "a call slower than this is slow")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	c, ok := contestants.ByName(*name)
	if !ok || *n < 10 {
		fmt.Fprintf(stderr, "slowcalls: unknown contestant %q, or n %d < 10\n", *name, *n)
		return 2
	}
	lat, err := logTimed(c, *n)
	if err != nil {
		fmt.Fprintln(stderr, "slowcalls:", err)
		return 1
	}
	fmt.Fprint(stdout, report(*name, lat, *over))
	return 0
}

// logTimed logs n reference records with c's handler into a temporary
// file and returns each call's time.
func logTimed(c harness.Contestant, n int) ([]time.Duration, error) {
	f, err := os.CreateTemp("", "slowcalls-*.log")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h, flush, err := c.New(f)
	if err != nil {
		return nil, err
	}
	l, ctx := slog.New(h), context.Background()
	lat := make([]time.Duration, n)
	base := time.Now()
	for i := range lat {
		a := time.Since(base) // monotonic reads, as the comparison command times calls
		harness.LogReference(ctx, l, i)
		lat[i] = time.Since(base) - a
	}
	if flush != nil {
		err = flush()
	}
	if closer, ok := h.(interface{ Close() error }); ok {
		err = cmp.Or(err, closer.Close())
	}
	return lat, err
}

// report says how many calls in lat took longer than over, per tenth of
// the run, and the commonest gaps between two of them.
func report(name string, lat []time.Duration, over time.Duration) string {
	var tenths [10]int
	gaps := map[int]int{}
	slow, last := 0, -1
	for i, d := range lat {
		if d <= over {
			continue
		}
		slow++
		tenths[i*10/len(lat)]++
		if last >= 0 {
			gaps[i-last]++
		}
		last = i
	}
	common := slices.SortedFunc(maps.Keys(gaps), func(a, b int) int { return cmp.Compare(gaps[b], gaps[a]) })
	s := fmt.Sprintf("%s: %d of %d calls over %v (%.2f %%); per tenth of the run: %v\ncommonest gaps between slow calls (calls: times):",
		name, slow, len(lat), over, 100*float64(slow)/float64(len(lat)), tenths)
	for _, g := range common[:min(5, len(common))] {
		s += fmt.Sprintf(" %d: %d", g, gaps[g])
	}
	return s + "\n"
}
