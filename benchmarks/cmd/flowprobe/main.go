// Command flowprobe logs N reference records through slog.Logger into a
// file with one contestant, in this process only, and prints what the
// process spent per record: CPU (user and system, getrusage), wall time,
// and for asyncbus the drainer's batching (records per drain round, write
// calls). It is the smallest real flow: run it under a
// profiler (-cpuprofile) or valgrind to count a contestant's instructions
// per record, e.g.
//
//	go build -o /tmp/flowprobe ./cmd/flowprobe
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/flowprobe -n 60000
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/flowprobe -n 20000
//
// and divide the difference of the two totals by 40000 (the start-up cost
// cancels out). The comparison itself is cmd/compare.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowprobe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("contestant", contestants.AsyncbusBlock, "contestant, one of cmd/compare's")
	n := fs.Int("n", 1000000, "records")
	g := fs.Int("goroutines", 1, "producer goroutines (each logs n/goroutines records)")
	out := fs.String("file", "", "log file (default: a new file in a temporary directory, removed afterwards)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the logging to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n <= 0 || *g <= 0 || *g > *n {
		fmt.Fprintln(stderr, "flowprobe: need 0 < goroutines <= n")
		return 2
	}
	c, ok := contestants.ByName(*name)
	if !ok {
		fmt.Fprintf(stderr, "flowprobe: no contestant %q (have %v)\n", *name, contestants.Names())
		return 2
	}
	path := *out
	if path == "" {
		dir, err := os.MkdirTemp("", "flowprobe")
		if err != nil {
			fmt.Fprintln(stderr, "flowprobe:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "probe.log")
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "flowprobe:", err)
		return 1
	}
	defer f.Close()
	h, flush, err := c.New(f)
	if err != nil {
		fmt.Fprintln(stderr, "flowprobe:", err)
		return 1
	}
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(stderr, "flowprobe:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	l := slog.New(h)
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	for range *g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range *n / *g {
				harness.LogReference(ctx, l, i)
			}
		}()
	}
	wg.Wait()
	if flush != nil {
		if err := flush(); err != nil {
			fmt.Fprintln(stderr, "flowprobe: flush:", err)
			return 1
		}
	}
	wall := time.Since(start)
	recs := *n / *g * *g
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(stderr, "flowprobe:", err)
		return 1
	}
	per := func(d int64) time.Duration { return time.Duration(d / int64(recs)) }
	fmt.Fprintf(stdout, "%s, %d records, %d goroutines: wall %v/record, CPU %v/record (user %v, system %v)",
		*name, recs, *g, per(int64(wall)), per(ru.Utime.Nano()+ru.Stime.Nano()), per(ru.Utime.Nano()), per(ru.Stime.Nano()))
	if ab, ok := h.(*asyncbus.Handler); ok {
		s, d := ab.Stats(), ab.DrainerStats()
		fmt.Fprintf(stdout, "; drain rounds %d, records per round %.1f, write calls %d",
			d.Batches, float64(s.Written)/float64(max(d.Batches, 1)), d.WriteCalls)
	}
	fmt.Fprintln(stdout)
	if ab, ok := h.(*asyncbus.Handler); ok {
		if err := ab.Close(); err != nil {
			fmt.Fprintln(stderr, "flowprobe: close:", err)
			return 1
		}
	}
	return 0
}
