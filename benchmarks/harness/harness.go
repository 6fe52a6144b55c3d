package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/asyncbus/asyncbus/internal/reference"
)

// SeqStride separates the goroutines' seq ranges: the i-th record of
// goroutine g carries seq = g*SeqStride + i, so at most SeqStride records
// per goroutine.
const SeqStride = 1_000_000_000

// Constructor builds a contestant's handler writing to f. flush, if not
// nil, must return only once every record handled so far is in f (written
// to the kernel; the harness fsyncs f itself afterwards). If the handler also has a
// Close() error method, the harness calls it after the idle window, before
// reading the file back.
type Constructor func(f *os.File) (h slog.Handler, flush func() error, err error)

// Contestant is one named handler set-up under test.
type Contestant struct {
	// Name identifies the contestant in tables, the chart and the child
	// process protocol; it must be unique within a Config.
	Name string
	// New builds the handler for one run.
	New Constructor
	// Discards marks a contestant that writes nothing on purpose (the
	// no-op floor): its file is not checked and Lost is not reported.
	Discards bool
}

// Config says what Run measures.
type Config struct {
	// Contestants to measure, in table order.
	Contestants []Contestant
	// Goroutines lists the producer goroutine counts; each must be >= 1
	// and <= N.
	Goroutines []int
	// N is the number of records per run, split evenly over the goroutines.
	N int
	// Repeat is the number of runs per (contestant, goroutines); >= 1.
	Repeat int
	// Idle is how long the handler stays open, idle, after each run while
	// the process CPU is measured. Zero skips the idle figure.
	Idle time.Duration
	// SampleEvery times every k-th call of each goroutine (1 = every
	// call; 0 means 1).
	SampleEvery int
	// TempDir holds the temporary log files (default os.TempDir()).
	TempDir string
	// Isolate runs every measurement in a child process, re-executing
	// Executable with ChildArgs; the child must call ServeChild with the
	// same contestants (see IsChild). Needed for a per-run peak RSS.
	Isolate bool
	// Executable is the program re-executed for isolated runs (default
	// os.Executable(), falling back to os.Args[0]).
	Executable string
	// ChildArgs are the arguments given to the child (default
	// os.Args[1:]), so that it builds the same contestants.
	ChildArgs []string
	// Progress, if not nil, receives a carriage-return-updated progress
	// line.
	Progress io.Writer
	// Label is a free text describing the run (format, machine notes); it
	// is copied into the Results.
	Label string
	// Shape is the record logged (Shapes; "" is ShapeReference).
	Shape string
}

// Job is one measurement: one contestant at one goroutine count.
type Job struct {
	Contestant  string        `json:"contestant"`      // the contestant's Name
	Goroutines  int           `json:"goroutines"`      // producer goroutines, 1..N
	N           int           `json:"n"`               // records in all
	Rep         int           `json:"rep"`             // repeat number, for the record
	SampleEvery int           `json:"sample_every"`    // time every k-th call (>= 1)
	Idle        time.Duration `json:"idle_ns"`         // idle window after the run; 0 skips it
	TempDir     string        `json:"temp_dir"`        // where the log file goes; "" is os.TempDir()
	Shape       string        `json:"shape,omitempty"` // the record logged (Shapes; "" is ShapeReference)
}

// Sample holds the figures of one run.
// Durations are in nanoseconds; see the package documentation for how each
// figure is measured.
type Sample struct {
	Contestant string `json:"contestant"` // the contestant's Name
	Goroutines int    `json:"goroutines"` // producer goroutines
	Rep        int    `json:"rep"`        // repeat number, from 1
	N          int    `json:"n"`          // records logged
	Isolated   bool   `json:"isolated"`   // measured in a child process
	Discards   bool   `json:"discards"`   // the contestant writes nothing on purpose

	ElapsedNS       int64   `json:"elapsed_ns"`             // release of the goroutines to the end of flush and fsync
	SyncNS          int64   `json:"sync_ns"`                // the final fsync's share of ElapsedNS
	RecordsPerSec   float64 `json:"records_per_sec"`        // N / Elapsed
	NsPerCall       float64 `json:"ns_per_call"`            // mean of the latency samples
	Samples         int     `json:"latency_samples"`        // calls timed
	P50NS           int64   `json:"p50_ns"`                 // call latency percentiles (nearest rank)
	P99NS           int64   `json:"p99_ns"`                 // …
	P999NS          int64   `json:"p999_ns"`                // …
	MaxNS           int64   `json:"max_ns"`                 // slowest timed call
	AllocsPerRecord float64 `json:"allocs_per_record"`      // heap allocations / N, whole process
	BytesPerRecord  float64 `json:"alloc_bytes_per_record"` // heap bytes allocated / N
	CPUPerRecordNS  float64 `json:"cpu_per_record_ns"`      // user+system CPU / N, whole process
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`         // ru_maxrss before the file is read back
	IdleWindowNS    int64   `json:"idle_window_ns"`         // measured length of the idle window
	IdleCPUPercent  float64 `json:"idle_cpu_percent"`       // process CPU over the idle window, % of one core

	FileBytes   int64     `json:"file_bytes"`  // size of the file after Close
	Count       LineCount `json:"count"`       // what reading the file back found
	Lost        int64     `json:"lost"`        // N - Count.Lines (0 for Discards)
	Unaccounted int64     `json:"unaccounted"` // Lost - Count.MarkerDropped (0 for Discards)

	// HandlerStats holds the numeric fields of the handler's Stats() and
	// DrainerStats() results (asyncbus's debugging view of its drainer),
	// for each such method it has, read after Close. They are reported,
	// never trusted: Lost comes from the file.
	HandlerStats map[string]uint64 `json:"handler_stats,omitempty"`
}

// perGoroutine returns how many of n records goroutine g of G logs.
func perGoroutine(n, goroutines, g int) int {
	c := n / goroutines
	if g < n%goroutines {
		c++
	}
	return c
}

// ReferenceAttrs returns the attributes of the benchmark reference record,
// the ~200-byte access-log line "request handled" that every asyncbus
// benchmark and comparison logs: method, path, status, latency (a
// duration), bytes (int64), cache_hit and seq. The one definition of the
// workload is the library's internal/reference, which the library's own
// tests use too; everything here derives from it.
func ReferenceAttrs(seq int) [7]slog.Attr { return reference.Attrs(seq) }

// ReferenceMessage is the reference record's message.
const ReferenceMessage = reference.Message

// ReferenceTime is the fixed time of [ReferenceRecord].
var ReferenceTime = reference.Time

// ReferenceRecord returns the reference record as a slog.Record with seq 42,
// at [ReferenceTime] and with no source PC, for benchmarks of a handler or
// encoder alone.
func ReferenceRecord() slog.Record { return reference.Record() }

// LogReference logs the reference record with the given seq through l.
// LogAttrs is used instead of Info so that the front end does not box the
// int attributes; every contestant gets the identical call.
func LogReference(ctx context.Context, l *slog.Logger, seq int) {
	a := ReferenceAttrs(seq)
	l.LogAttrs(ctx, slog.LevelInfo, ReferenceMessage, a[:]...)
}

func (j Job) validate() error {
	switch {
	case j.N <= 0:
		return fmt.Errorf("harness: N must be > 0, got %d", j.N)
	case j.Goroutines <= 0 || j.Goroutines > j.N:
		return fmt.Errorf("harness: goroutines must be in [1, N=%d], got %d", j.N, j.Goroutines)
	case j.N/j.Goroutines+1 > SeqStride:
		return fmt.Errorf("harness: more than %d records per goroutine", SeqStride)
	case j.SampleEvery < 1:
		return fmt.Errorf("harness: SampleEvery must be >= 1, got %d", j.SampleEvery)
	case j.Idle < 0:
		return fmt.Errorf("harness: negative idle window %v", j.Idle)
	}
	if err := checkShape(j.Shape); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// Measure runs one job in this process and returns its figures.
func Measure(c Contestant, j Job) (s Sample, err error) {
	if err := j.validate(); err != nil {
		return s, err
	}
	if c.New == nil {
		return s, fmt.Errorf("harness: contestant %q has no constructor", c.Name)
	}
	dir := j.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "asyncbus-bench-*.log")
	if err != nil {
		return s, fmt.Errorf("harness: %w", err)
	}
	name := f.Name()
	defer func() {
		if cerr := f.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) && err == nil {
			err = fmt.Errorf("harness: closing %s: %w", name, cerr)
		}
		if rerr := os.Remove(name); rerr != nil && err == nil {
			err = fmt.Errorf("harness: %w", rerr)
		}
	}()

	h, flush, err := c.New(f)
	if err != nil {
		return s, fmt.Errorf("harness: %s: %w", c.Name, err)
	}
	if h == nil {
		return s, fmt.Errorf("harness: %s: constructor returned a nil handler", c.Name)
	}
	closer, _ := h.(interface{ Close() error })
	closed := false
	defer func() {
		if closer != nil && !closed {
			_ = closer.Close() // error path only: the first error is already returned
		}
	}()
	logger := slog.New(h)
	ctx := context.Background()

	G := j.Goroutines
	lat := make([][]int64, G)
	for g := range lat {
		lat[g] = make([]int64, 0, perGoroutine(j.N, G, g)/j.SampleEvery+1)
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(G)
	done.Add(G)
	for g := 0; g < G; g++ {
		go func(g int) {
			defer done.Done()
			n := perGoroutine(j.N, G, g)
			buf := lat[g]
			every := j.SampleEvery
			base := time.Now()
			ready.Done()
			<-start
			countdown := 0
			for i := 0; i < n; i++ {
				seq := g*SeqStride + i
				if countdown == 0 {
					countdown = every
					a := time.Since(base) // monotonic-only read: cheaper than two time.Now
					LogShape(ctx, logger, j.Shape, seq)
					buf = append(buf, int64(time.Since(base)-a))
				} else {
					LogShape(ctx, logger, j.Shape, seq)
				}
				countdown--
			}
			lat[g] = buf
		}(g)
	}
	ready.Wait()
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	u0 := readUsage()
	t0 := time.Now()
	close(start)
	done.Wait()
	if flush != nil {
		if err := flush(); err != nil {
			return s, fmt.Errorf("harness: %s: flush: %w", c.Name, err)
		}
	}
	// Every contestant's run ends with one fsync inside the timed region:
	// asyncbus's Flush syncs a *os.File itself, so syncing everyone keeps
	// the comparison fair (for asyncbus this second sync finds nothing
	// dirty). SyncNS shows what it cost.
	ts := time.Now()
	if err := f.Sync(); err != nil {
		return s, fmt.Errorf("harness: %s: fsync: %w", c.Name, err)
	}
	syncDur := time.Since(ts)
	elapsed := time.Since(t0)
	u1 := readUsage()
	runtime.ReadMemStats(&ms1)

	s = Sample{
		Contestant: c.Name, Goroutines: G, Rep: j.Rep, N: j.N, Discards: c.Discards,
		ElapsedNS:       elapsed.Nanoseconds(),
		SyncNS:          syncDur.Nanoseconds(),
		RecordsPerSec:   float64(j.N) / elapsed.Seconds(),
		AllocsPerRecord: float64(ms1.Mallocs-ms0.Mallocs) / float64(j.N),
		BytesPerRecord:  float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(j.N),
		CPUPerRecordNS:  float64(u1.cpu-u0.cpu) / float64(j.N),
	}
	all := make([]int64, 0, j.N/j.SampleEvery+G)
	for _, b := range lat {
		all = append(all, b...)
	}
	lat = nil
	s.Samples = len(all)
	s.NsPerCall = mean(all)
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	s.P50NS = Percentile(all, 50)
	s.P99NS = Percentile(all, 99)
	s.P999NS = Percentile(all, 99.9)
	s.MaxNS = Percentile(all, 100)
	all = nil

	if j.Idle > 0 {
		runtime.GC() // leftover garbage of the run must not count as idle work
		i0 := readUsage()
		w0 := time.Now()
		time.Sleep(j.Idle) // the measurement itself: a wall-clock window of idleness
		wall := time.Since(w0)
		i1 := readUsage()
		s.IdleWindowNS = wall.Nanoseconds()
		s.IdleCPUPercent = 100 * float64(i1.cpu-i0.cpu) / float64(wall)
	}
	if closer != nil {
		closed = true
		if err := closer.Close(); err != nil {
			return s, fmt.Errorf("harness: %s: close: %w", c.Name, err)
		}
	}
	s.HandlerStats = handlerStats(h)
	s.PeakRSSBytes = readUsage().maxRSS // before the read-back below adds its buffers

	if err := f.Close(); err != nil {
		return s, fmt.Errorf("harness: closing %s: %w", name, err)
	}
	// The file is read back even for a Discards contestant: it must be empty.
	rf, err := os.Open(name)
	if err != nil {
		return s, fmt.Errorf("harness: %w", err)
	}
	count, err := CountLines(rf, j.N, G)
	_ = rf.Close() // read-only file: nothing to lose on close
	if err != nil {
		return s, fmt.Errorf("harness: %s: reading back: %w", c.Name, err)
	}
	s.Count = count
	s.FileBytes = count.Bytes
	if !c.Discards {
		s.Lost = int64(j.N) - count.Lines
		s.Unaccounted = s.Lost - int64(count.MarkerDropped)
	}
	return s, nil
}

func mean(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return sum / float64(len(v))
}

// handlerStats returns the unsigned and signed integer fields of the
// structs returned by h.Stats() and h.DrainerStats(), for each such method
// h has that takes no arguments; nil if there are none.
func handlerStats(h slog.Handler) map[string]uint64 {
	out := map[string]uint64{}
	for _, method := range []string{"Stats", "DrainerStats"} {
		statsFields(reflect.ValueOf(h).MethodByName(method), out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// statsFields adds to out the unsigned and signed integer fields of the
// struct m returns, if m is a valid method taking no arguments and
// returning one (pointer to a) struct.
func statsFields(m reflect.Value, out map[string]uint64) {
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return
	}
	v := m.Call(nil)[0]
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			continue
		}
		fv := v.Field(i)
		switch fv.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			out[t.Field(i).Name] = fv.Uint()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if x := fv.Int(); x >= 0 {
				out[t.Field(i).Name] = uint64(x)
			}
		}
	}
}

// contestantNames checks that names are present and unique.
func contestantNames(cs []Contestant) error {
	if len(cs) == 0 {
		return errors.New("harness: no contestants")
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Name == "" || strings.ContainsAny(c.Name, "\r\n") {
			return fmt.Errorf("harness: invalid contestant name %q", c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("harness: duplicate contestant %q", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}
