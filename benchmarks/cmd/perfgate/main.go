// Command perfgate is CI's performance gate: it fails when asyncbus has
// become more than 20 % slower, relative to slog.JSONHandler, than the
// ratio recorded in baseline.json, or when a workload allocates more
// than the baseline says.
//
// Each workload logs the same records through slog.Logger into
// io.Discard, once with asyncbus and once with slog.JSONHandler,
// alternating (the order flips every round), and takes the ratio of the
// two CPU times (the process's, getrusage(2), so the drainer's work
// counts) in each round. The gate compares the median of
// those ratios with the stored one: a slower or busier machine slows both
// handlers alike, so the ratio, unlike a time, travels between machines
// and survives a loaded CI runner. Allocations are compared exactly.
//
//	go run ./cmd/perfgate            # the gate (CI)
//	go run ./cmd/perfgate -update    # measure again and rewrite baseline.json
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
)

//go:embed baseline.json
var baselineJSON []byte

// Baseline is what baseline.json holds per workload: the median ratio of
// asyncbus's time per record to slog.JSONHandler's, and asyncbus's
// allocations per record.
type Baseline struct {
	Ratio  float64 `json:"ratio"`
	Allocs float64 `json:"allocs"`
}

// workload is one measured configuration.
type workload struct {
	name       string
	goroutines int
	options    asyncbus.Options
}

var workloads = []workload{
	{name: "json/1", goroutines: 1},
	{name: "json/4", goroutines: 4},
	{name: "json-seq/1", goroutines: 1, options: asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}}},
	{name: "json-seq/4", goroutines: 4, options: asyncbus.Options{Features: asyncbus.FeatureOptions{Sequence: true}}},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("perfgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 31, "alternating rounds per workload (the median is taken)")
	records := fs.Int("records", 10000, "records per goroutine per run")
	slack := fs.Float64("slack", 1.20, "the largest ratio allowed, as a multiple of the baseline's")
	update := fs.String("update", "", "measure with 3× the rounds and write the baseline to this file (cmd/perfgate/baseline.json)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *rounds < 1 || *records < 1 {
		fmt.Fprintln(stderr, "perfgate: -rounds and -records must be positive")
		return 2
	}
	if *update != "" {
		return writeBaseline(*update, 3**rounds, *records, stdout, stderr)
	}
	var base map[string]Baseline
	if err := json.Unmarshal(baselineJSON, &base); err != nil {
		fmt.Fprintln(stderr, "perfgate: baseline.json:", err)
		return 2
	}
	failed := false
	for _, w := range workloads {
		b, ok := base[w.name]
		if !ok {
			fmt.Fprintf(stderr, "perfgate: baseline.json has no %q (run with -update)\n", w.name)
			return 2
		}
		m := measure(w, *rounds, *records)
		verdict := "ok"
		if m.Ratio > b.Ratio**slack {
			verdict, failed = fmt.Sprintf("FAIL: more than %.0f %% above the baseline", (*slack-1)*100), true
		}
		if m.Allocs > b.Allocs {
			verdict, failed = fmt.Sprintf("FAIL: %.2f allocs/record, the baseline has %.2f", m.Allocs, b.Allocs), true
		}
		fmt.Fprintf(stdout, "%-8s ratio %.3f (baseline %.3f, limit %.3f; rounds %.3f–%.3f) allocs %.2f (baseline %.2f): %s\n",
			w.name, m.Ratio, b.Ratio, b.Ratio**slack, m.min, m.max, m.Allocs, b.Allocs, verdict)
	}
	if failed {
		fmt.Fprintln(stdout, "perfgate: asyncbus got slower than its baseline; if that is intended, run `go run ./cmd/perfgate -update cmd/perfgate/baseline.json` in benchmarks/ and commit the new baseline with the reason")
		return 1
	}
	return 0
}

// writeBaseline measures every workload and writes the result to path.
func writeBaseline(path string, rounds, records int, stdout, stderr io.Writer) int {
	out := make(map[string]Baseline, len(workloads))
	for _, w := range workloads {
		m := measure(w, rounds, records)
		out[w.name] = Baseline{Ratio: round3(m.Ratio), Allocs: m.Allocs}
		fmt.Fprintf(stdout, "%-8s ratio %.3f (rounds %.3f–%.3f) allocs %.2f\n", w.name, m.Ratio, m.min, m.max, m.Allocs)
	}
	data, err := json.MarshalIndent(out, "", "\t")
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "perfgate:", err)
		return 1
	}
	return 0
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// measurement is one workload's result.
type measurement struct {
	Baseline
	min, max float64 // the smallest and largest round's ratio
}

// measure runs w's two handlers alternately for rounds rounds and returns
// the median ratio and asyncbus's allocations per record.
func measure(w workload, rounds, records int) measurement {
	opts := w.options
	h := asyncbus.NewHandler(io.Discard, &opts)
	defer h.Close()
	ours := slog.New(h)
	ref := slog.New(slog.NewJSONHandler(io.Discard, nil))
	logAll(ours, w.goroutines, records/10) // warm both up: first-use allocations, page faults
	logAll(ref, w.goroutines, records/10)
	_ = h.Flush()
	ratios := make([]float64, 0, rounds)
	for r := range rounds {
		var a, s time.Duration
		if r%2 == 0 {
			a, s = timeRun(ours, h, w.goroutines, records), timeRun(ref, nil, w.goroutines, records)
		} else {
			s, a = timeRun(ref, nil, w.goroutines, records), timeRun(ours, h, w.goroutines, records)
		}
		ratios = append(ratios, float64(a)/float64(s))
	}
	slices.Sort(ratios)
	allocs := testing.AllocsPerRun(1000, func() { logOne(ours, 0) })
	_ = h.Flush()
	return measurement{
		Baseline: Baseline{Ratio: ratios[len(ratios)/2], Allocs: allocs},
		min:      ratios[0],
		max:      ratios[len(ratios)-1],
	}
}

// timeRun logs records records from each of g goroutines and returns the
// CPU time the process used to log them and, for asyncbus (h non-nil), to
// write them (Flush): the callers' work and the drainer's.
func timeRun(l *slog.Logger, h *asyncbus.Handler, g, records int) time.Duration {
	start := processCPU()
	logAll(l, g, records)
	if h != nil {
		_ = h.Flush()
	}
	return processCPU() - start
}

func logAll(l *slog.Logger, g, records int) {
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			for i := range records {
				logOne(l, i)
			}
		})
	}
	wg.Wait()
}

// logOne logs a typical access-log record: a message and five attributes.
func logOne(l *slog.Logger, i int) {
	l.LogAttrs(context.Background(), slog.LevelInfo, "request handled",
		slog.String("method", "GET"),
		slog.String("path", "/api/v1/users/12345/orders"),
		slog.Int("status", 200),
		slog.Int("i", i),
		slog.Duration("took", 1234567*time.Nanosecond),
	)
}
