// Command logwriter-compare measures zap, zerolog, logrus and the standard
// log writing through a logwriter.Writer against each on its own output
// (zap's BufferedWriteSyncer, zerolog's diode, the plain file), end to end
// into a real file with an fsync at the end: records/s, the callers' p99
// and lines lost at 1, 4 and 16 goroutines, contestants alternating within
// each round, medians over the rounds. It prints a markdown report.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 50_000, "records per run")
	rounds := flag.Int("rounds", 5, "rounds (the report gives medians)")
	gs := flag.String("goroutines", "1,4,16", "goroutine counts")
	slow := flag.Duration("slow", 0, "make every write to the file take this long more (a slow pipe or disk)")
	only := flag.String("only", "", "run only the contestants whose names start with one of these comma-separated prefixes")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer stop()
	}
	var counts []int
	for _, s := range strings.Split(*gs, ",") {
		g, err := strconv.Atoi(s)
		if err != nil || g < 1 {
			fmt.Fprintln(os.Stderr, "bad -goroutines:", s)
			os.Exit(2)
		}
		counts = append(counts, g)
	}
	dir, err := os.MkdirTemp("", "logwriter-compare")
	if err == nil {
		defer os.RemoveAll(dir)
		var res results
		slowWrite = *slow
		res, err = measure(dir, *n, *rounds, counts, *only)
		if err == nil {
			res.report(os.Stdout, *n, *rounds)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// startCPUProfile starts the CPU profile into a new file at path and
// returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// sample is one run of one contestant.
type sample struct {
	rps       float64       // records per second, from the first call to the fsync's end
	p99       time.Duration // the callers' 99th percentile
	p999      time.Duration // and 99.9th
	nsPerCall float64       // the mean call
	cpu       time.Duration // the process's CPU time per record (user + system), callers and writers together
	lost      int64         // records not in the file
	counted   int64         // the losses the output's own counters report; -1: none kept
}

// key names a contestant at a goroutine count.
type key struct {
	name string
	g    int
}

// results holds every run's samples.
type results struct {
	counts  []int
	names   []string
	samples map[key][]sample
}

// measure runs every contestant at every goroutine count, rounds times,
// alternating: in each round every contestant runs once per count, the
// order rotated from round to round. The share rows (each logger into
// io.Discard) run at 1 goroutine and at every count, after the file rows.
func measure(dir string, n, rounds int, counts []int, only string) (results, error) {
	all, share := selected(contestants(), only), selected(shareContestants(), only)
	res := results{counts: counts, samples: map[key][]sample{}}
	for _, c := range all {
		res.names = append(res.names, c.name)
	}
	shareCounts := counts
	if !slices.Contains(counts, 1) {
		shareCounts = append([]int{1}, counts...)
	}
	for r := range rounds {
		for _, g := range counts {
			for i := range all {
				c := all[(i+r)%len(all)]
				if err := res.add(c, g, n, dir, true); err != nil {
					return res, err
				}
			}
		}
		for _, g := range shareCounts {
			for _, c := range share {
				if err := res.add(c, g, n, dir, false); err != nil {
					return res, err
				}
			}
		}
	}
	return res, nil
}

// add runs c once at g goroutines (runOnce) and keeps the sample.
func (res *results) add(c contestant, g, n int, dir string, toFile bool) error {
	s, err := runOnce(c, g, n, dir, toFile)
	if err != nil {
		return fmt.Errorf("%s, %d goroutines: %w", c.name, g, err)
	}
	res.samples[key{c.name, g}] = append(res.samples[key{c.name, g}], s)
	return nil
}

// selected returns the contestants whose names start with one of the
// comma-separated prefixes in only, or all of them for "".
func selected(cs []contestant, only string) []contestant {
	if only == "" {
		return cs
	}
	var out []contestant
	for _, c := range cs {
		for _, p := range strings.Split(only, ",") {
			if strings.HasPrefix(c.name, p) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// slowWrite is -slow: the delay each write to the file takes on top of the
// write itself.
var slowWrite time.Duration

// slowFile is the file behind an output whose every Write takes slowWrite
// longer (a slow pipe or a busy network disk); Sync passes through.
type slowFile struct{ f *os.File }

func (s slowFile) Write(p []byte) (int, error) {
	time.Sleep(slowWrite) // the slow output itself, not synchronisation
	return s.f.Write(p)
}

func (s slowFile) Sync() error { return s.f.Sync() }

// runOnce logs n records through c from g goroutines into a new file (or
// io.Discard), waits for c's finish and fsyncs, and counts the lines.
func runOnce(c contestant, g, n int, dir string, toFile bool) (sample, error) {
	var out io.Writer = io.Discard
	var f *os.File
	if toFile {
		var err error
		f, err = os.Create(filepath.Join(dir, c.name+".log"))
		if err != nil {
			return sample{}, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		out = f
		if slowWrite > 0 {
			out = slowFile{f}
		}
	}
	logFn, finish := c.setup(out)
	per := n / g
	lat := make([][]time.Duration, g)
	var wg sync.WaitGroup
	runtime.GC() // the previous run's garbage is not this run's CPU time
	cpu0, start := cpuTime(), time.Now()
	for i := range g {
		wg.Go(func() {
			l := make([]time.Duration, per)
			for j := range per {
				t0 := time.Now()
				logFn(i*per + j)
				l[j] = time.Since(t0)
			}
			lat[i] = l
		})
	}
	wg.Wait()
	counted, err := finish()
	if err == nil && f != nil {
		err = f.Sync()
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		return sample{}, err
	}
	all := slices.Concat(lat...)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	slices.Sort(all)
	s := sample{
		rps:       float64(len(all)) / wall.Seconds(),
		p99:       all[len(all)*99/100],
		p999:      all[len(all)*999/1000],
		nsPerCall: float64(sum.Nanoseconds()) / float64(len(all)),
		cpu:       cpu / time.Duration(len(all)),
		counted:   counted,
	}
	if f != nil {
		data, err := os.ReadFile(f.Name())
		if err != nil {
			return sample{}, err
		}
		s.lost = int64(len(all)) - int64(bytes.Count(data, []byte(message)))
	}
	return s, nil
}

// median returns the median of the samples' values by get.
func median[T int64 | float64 | time.Duration](ss []sample, get func(sample) T) T {
	v := make([]T, len(ss))
	for i, s := range ss {
		v[i] = get(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// worst returns the largest of the samples' values by get.
func worst(ss []sample, get func(sample) int64) int64 {
	m := get(ss[0])
	for _, s := range ss[1:] {
		m = max(m, get(s))
	}
	return m
}
