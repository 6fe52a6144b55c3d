// Package cpurecord measures the CPU a handler spends per record when its
// output costs nothing (io.Discard): the process's user and system time
// (getrusage), the handler's own goroutines included, divided by the
// records logged. Every contestant sits behind the same slog.Logger front
// end and gets the same calls, so the figures compare what each handler
// adds; slog.JSONHandler is the baseline, and each figure's ratio to it is
// taken within the same round, the contestants alternating, so that a
// busy machine slows both sides of a ratio alike.
//
// It backs BenchmarkCPUPerRecord (go test -bench) and cmd/cpurecord, which
// prints the table of benchmarks/results/cpu-per-record.md.
package cpurecord

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// Shape is one kind of record, as a program logs it.
type Shape struct {
	Name string
	// N is the records of one measurement at scale 1: enough for about a
	// tenth of a second of slog.JSONHandler on one core, far above
	// getrusage's resolution.
	N int
	// Prepare returns the logger a goroutine logs through: l itself, or
	// one derived from it (With), built before the clock starts.
	Prepare func(l *slog.Logger) *slog.Logger
	// Log logs one record.
	Log func(ctx context.Context, l *slog.Logger)
}

func same(l *slog.Logger) *slog.Logger { return l }

// Shapes returns the record shapes: short, a message alone; 1kb-attrs and
// 1kb-pairs, the ~1 KB structs record (harness.StructAttrs) with LogAttrs
// and with Info's key-value pairs; with, the access-log attributes through
// a logger carrying four With attributes and a group.
func Shapes() []Shape {
	attrs := harness.StructAttrs()
	pairs := harness.StructPairs()
	return []Shape{
		{Name: "short", N: 300_000, Prepare: same, Log: func(ctx context.Context, l *slog.Logger) {
			l.LogAttrs(ctx, slog.LevelInfo, "connection accepted")
		}},
		{Name: "1kb-attrs", N: 20_000, Prepare: same, Log: func(ctx context.Context, l *slog.Logger) {
			l.LogAttrs(ctx, slog.LevelInfo, harness.StructsMessage, attrs[:]...)
		}},
		{Name: "1kb-pairs", N: 20_000, Prepare: same, Log: func(ctx context.Context, l *slog.Logger) {
			l.Info(harness.StructsMessage, pairs...)
		}},
		{Name: "with", N: 100_000, Prepare: func(l *slog.Logger) *slog.Logger {
			return l.With("service", "checkout", "region", "eu-west-1", "version", "1.4.2", "instance", 7).WithGroup("request")
		}, Log: func(ctx context.Context, l *slog.Logger) {
			l.LogAttrs(ctx, slog.LevelInfo, "request handled", slog.String("method", "GET"),
				slog.String("path", "/api/v1/users/12345/orders"), slog.Int("status", 200),
				slog.Duration("latency", 1500*time.Microsecond))
		}},
	}
}

// Contestant is a handler writing JSON to io.Discard. done, called inside
// the measured time, returns once the handler has finished with every
// record (asyncbus: Close, which waits for its drainer).
type Contestant struct {
	Name string
	New  func() (h slog.Handler, done func())
}

// Baseline is the contestant the ratios divide by.
const Baseline = "slog-json"

func nothing() {}

// Contestants returns slog.JSONHandler (the baseline), asyncbus in Block
// and Drop mode, and the peers' slog handlers: zap (zapslog), zerolog
// (zerolog.NewSlogHandler) and phuslu/log (Logger.Slog), all on io.Discard.
func Contestants() []Contestant {
	bus := func(o asyncbus.Overflow) func() (slog.Handler, func()) {
		return func() (slog.Handler, func()) {
			h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Format: asyncbus.JSON,
				Ring: asyncbus.RingOptions{Overflow: o}, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
			return h, func() { _ = h.Close() }
		}
	}
	return []Contestant{
		{Name: Baseline, New: func() (slog.Handler, func()) { return slog.NewJSONHandler(io.Discard, nil), nothing }},
		{Name: "asyncbus-block", New: bus(asyncbus.Block)},
		{Name: "asyncbus-drop", New: bus(asyncbus.Drop)},
		{Name: "zap", New: func() (slog.Handler, func()) {
			core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
			return zapslog.NewHandler(core), nothing
		}},
		{Name: "zerolog", New: func() (slog.Handler, func()) {
			return zerolog.NewSlogHandler(zerolog.New(io.Discard)), nothing
		}},
		{Name: "phuslu", New: func() (slog.Handler, func()) {
			l := &plog.Logger{Level: plog.InfoLevel, Writer: plog.IOWriter{Writer: io.Discard}}
			return l.Slog().Handler(), nothing
		}},
	}
}

// Sample is one measurement's figures, per record.
type Sample struct {
	CPUNS  float64 // process CPU (user + system) per record
	WallNS float64 // wall time per record
}

// warmUp is how many records a measurement logs before the clock starts,
// so that pools, caches and the first GC cycles are behind it.
const warmUp = 2000

// Measure logs n records of shape s through a fresh handler of c, split
// over goroutines, and returns the CPU and wall time per record, from the
// release of the goroutines to the end of done.
func Measure(c Contestant, s Shape, goroutines, n int) Sample {
	h, done := c.New()
	root := slog.New(h)
	ctx := context.Background()
	for range warmUp {
		s.Log(ctx, s.Prepare(root))
	}
	if f, ok := h.(interface{ Flush() error }); ok {
		_ = f.Flush() // the warm-up's records out of the way
	}
	var ready, finished sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		k := n / goroutines
		if g < n%goroutines {
			k++
		}
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			l := s.Prepare(root)
			ready.Done()
			<-start
			for range k {
				s.Log(ctx, l)
			}
		}()
	}
	ready.Wait()
	runtime.GC()
	c0, t0 := harness.ProcessCPU(), time.Now()
	close(start)
	finished.Wait()
	done()
	wall, cpu := time.Since(t0), harness.ProcessCPU()-c0
	return Sample{CPUNS: float64(cpu.Nanoseconds()) / float64(n), WallNS: float64(wall.Nanoseconds()) / float64(n)}
}
