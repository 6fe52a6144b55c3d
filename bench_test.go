package asyncbus_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/internal/reference"
	"github.com/asyncbus/asyncbus/internal/reqlevel"
)

// slowOutput is an output whose every Write takes delay (a network writer,
// a busy NFS file); with hang set, Write never returns until released.
type slowOutput struct {
	delay   time.Duration
	hang    bool
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *slowOutput) Write(p []byte) (int, error) {
	if w.hang {
		<-w.release
	}
	time.Sleep(w.delay) // the slow output itself, not synchronisation
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// BenchmarkCallerLatency is the table: one goroutine logging 500
// lines a second through a default handler (slog.New(NewHandler(w, nil)))
// into an output that takes 1, 5 or 50 ms per write, or never returns. It
// reports the callers' p50, p99 and slowest call, and for the hung output
// how long 5 Error calls took in all. Records lost on a slow output fail it.
// The quiet case is a quiet program: 100 lines a second (the quiet wait's
// rate, so every call makes the quiet wait) into a real file.
// Run with -benchtime=1000x (two seconds of calls per output, ten for the
// quiet program).
func BenchmarkCallerLatency(b *testing.B) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		hang  bool
		quiet bool // a real file, 100 calls a second
	}{
		{"write=1ms", time.Millisecond, false, false},
		{"write=5ms", 5 * time.Millisecond, false, false},
		{"write=50ms", 50 * time.Millisecond, false, false},
		{"write=hung", 0, true, false},
		{"quiet=file", 0, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var w io.Writer
			every := 2 * time.Millisecond // 500 calls a second
			slow := &slowOutput{delay: tc.delay, hang: tc.hang, release: make(chan struct{})}
			w = slow
			if tc.quiet {
				f, err := os.CreateTemp(b.TempDir(), "quiet-*.log")
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				w = f
				every = time.Second / 100 // the quiet wait's rate: each call waits
			}
			h := asyncbus.NewHandler(w, nil)
			l := slog.New(h)
			lat := make([]time.Duration, 0, b.N)
			start := time.Now()
			i := 0
			for b.Loop() {
				time.Sleep(time.Until(start.Add(time.Duration(i) * every))) // pacing
				t0 := time.Now()
				l.Info("request handled", "i", i, "path", "/api/v1/users/12345/orders")
				lat = append(lat, time.Since(t0))
				i++
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			if tc.hang {
				t0 := time.Now()
				for range 5 {
					l.Error("failed", "i", i)
				}
				b.ReportMetric(float64(time.Since(t0).Milliseconds()), "5errors-ms")
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				_ = h.CloseContext(ctx)
				cancel()
				close(slow.release)
				return
			}
			if err := h.Close(); err != nil {
				b.Fatal(err)
			}
			if st := h.Stats(); st.Written != uint64(i) {
				b.Fatalf("%d records logged, %d written: %+v", i, st.Written, st)
			}
		})
	}
}

// logAccess logs the benchmark reference record (package
// internal/reference, the workload of every asyncbus benchmark: the
// ~200-byte access-log line "request handled" with method, path, status,
// latency, bytes, cache_hit and seq, the record's id) at level through l.
// It uses LogAttrs, as the benchmarks module does, so that slog's front end
// does not box the integers.
func logAccess(ctx context.Context, l *slog.Logger, level slog.Level, seq int) {
	a := reference.Attrs(seq)
	l.LogAttrs(ctx, level, reference.Message, a[:]...)
}

// closeWritten closes h, outside the timed loop, and fails b unless
// exactly n records were written.
// logEach logs the reference record through l at level once per b.Loop
// iteration and returns how many it logged.
func logEach(ctx context.Context, b *testing.B, l *slog.Logger, level slog.Level) int {
	seq := 0
	for b.Loop() {
		logAccess(ctx, l, level, seq)
		seq++
	}
	return seq
}

func closeWritten(b *testing.B, h *asyncbus.Handler, n int) {
	b.Helper()
	b.StopTimer()
	if err := h.Close(); err != nil {
		b.Fatal(err)
	}
	if st := h.Stats(); st.Written != uint64(n) || st.Dropped != 0 || st.Failed != 0 {
		b.Fatalf("%d records logged, %d written: %+v", n, st.Written, st)
	}
}

// derivedLogger keeps the loggers BenchmarkHandle's derive cases make
// reachable, so that deriving is not optimised away.
var derivedLogger *slog.Logger

// BenchmarkHandle is the cost of one slog call to a caller, through a
// slog.Logger over a default handler (Block, 8 MiB ring) logging the
// reference record at Info:
//
//   - JSON, Text, Logfmt, Console, ZapJSON, ZapConsole: each format into
//     io.Discard;
//   - disabled: a Debug call below the Info level; the disabled-* and
//     request-* cases are the per-request level's (benchRequestLevel);
//   - WithAttrs/derive, WithGroup/derive: deriving a logger (Logger.With
//     of two attributes, Logger.WithGroup); WithAttrs/log, WithGroup/log:
//     logging through the derived logger;
//   - parallel: JSON into io.Discard from GOMAXPROCS goroutines
//     (b.RunParallel);
//   - file: JSON into a regular file (os.CreateTemp in b.TempDir()).
//
// Close, outside the timing, checks that every record was written. Runs in
// well under a second with -benchtime=100x.
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	formats := []struct {
		name   string
		format asyncbus.Format
	}{
		{"JSON", asyncbus.JSON},
		{"Text", asyncbus.Text},
		{"Logfmt", asyncbus.Logfmt},
		{"Console", asyncbus.Console},
		{"ZapJSON", asyncbus.ZapJSON},
		{"ZapConsole", asyncbus.ZapConsole},
	}
	for _, tc := range formats {
		b.Run(tc.name, func(b *testing.B) {
			h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Format: tc.format, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
			l := slog.New(h)
			b.ReportAllocs()
			seq := logEach(ctx, b, l, slog.LevelInfo)
			closeWritten(b, h, seq)
		})
	}

	b.Run("disabled", func(b *testing.B) {
		reqlevel.Forget() // no request level in the process, as before the feature
		h := asyncbus.NewHandler(io.Discard, nil)
		l := slog.New(h)
		b.ReportAllocs()
		logEach(ctx, b, l, slog.LevelDebug)
		closeWritten(b, h, 0)
	})
	benchRequestLevel(b)

	derives := []struct {
		name   string
		derive func(*slog.Logger) *slog.Logger
	}{
		{"WithAttrs", func(l *slog.Logger) *slog.Logger {
			return l.With(slog.String("service", "checkout"), slog.String("region", "eu-west-1"))
		}},
		{"WithGroup", func(l *slog.Logger) *slog.Logger { return l.WithGroup("http") }},
	}
	for _, tc := range derives {
		b.Run(tc.name+"/derive", func(b *testing.B) {
			h := asyncbus.NewHandler(io.Discard, nil)
			l := slog.New(h)
			b.ReportAllocs()
			for b.Loop() {
				derivedLogger = tc.derive(l)
			}
			derivedLogger = nil
			closeWritten(b, h, 0)
		})
		b.Run(tc.name+"/log", func(b *testing.B) {
			h := asyncbus.NewHandler(io.Discard, nil)
			l := tc.derive(slog.New(h))
			b.ReportAllocs()
			seq := logEach(ctx, b, l, slog.LevelInfo)
			closeWritten(b, h, seq)
		})
	}

	b.Run("parallel", func(b *testing.B) {
		h := asyncbus.NewHandler(io.Discard, nil)
		l := slog.New(h)
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			seq := 0
			for pb.Next() {
				logAccess(ctx, l, slog.LevelInfo, seq)
				seq++
			}
			n.Add(int64(seq))
		})
		closeWritten(b, h, int(n.Load()))
	})

	b.Run("file", func(b *testing.B) {
		f, err := os.CreateTemp(b.TempDir(), "bench-*.log")
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close() // after Close below: TempDir's removal needs it closed on Windows
		h := asyncbus.NewHandler(f, nil)
		l := slog.New(h)
		b.ReportAllocs()
		seq := logEach(ctx, b, l, slog.LevelInfo)
		closeWritten(b, h, seq)
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		if fi.Size() < int64(seq)*150 {
			b.Fatalf("the file holds %d bytes for %d records", fi.Size(), seq)
		}
	})
}

// BenchmarkFlightRecorder is the caller's cost of a Debug record the flight
// recorder keeps, next to an Info record written and a Debug record
// disabled, with the recorder off and on (on, Trace is below its level), on
// the reference access-log record.
func BenchmarkFlightRecorder(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		recorder bool
		level    slog.Level
		written  bool
	}{
		{"off/written-info", false, slog.LevelInfo, true},
		{"off/disabled-debug", false, slog.LevelDebug, false},
		{"on/written-info", true, slog.LevelInfo, true},
		{"on/kept-debug", true, slog.LevelDebug, false},
		{"on/disabled-trace", true, asyncbus.LevelTrace, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var fr *asyncbus.FlightRecorder
			if tc.recorder {
				fr = &asyncbus.FlightRecorder{}
			}
			h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Features: asyncbus.FeatureOptions{FlightRecorder: fr}})
			l := slog.New(h)
			b.ReportAllocs()
			seq := logEach(ctx, b, l, tc.level)
			if !tc.written {
				seq = 0
			}
			closeWritten(b, h, seq)
		})
	}
}

// benchRequestLevel is BenchmarkHandle's cases of the per-request level
// (ctxattrs.WithLevel), on a default handler (Info):
//
//   - disabled-ctx-unused, disabled-deep-ctx-unused: a Debug call with a
//     request context that carries no level (3 and 32 values deep), in a
//     process where no request level was ever set: the same cost as
//     disabled;
//   - disabled-ctx-used, disabled-deep-ctx-used: the same once some other
//     context set a level (Enabled then walks the context);
//   - request-debug: a Debug call whose context sets Debug: written;
//   - request-info: an Info call with that context: written without
//     looking at the context (the cost of JSON).
func benchRequestLevel(b *testing.B) {
	shallow := requestContext(3)
	deep := requestContext(32)
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		used  bool
		level slog.Level
	}{
		{"disabled-ctx-unused", shallow, false, slog.LevelDebug},
		{"disabled-ctx-used", shallow, true, slog.LevelDebug},
		{"disabled-deep-ctx-unused", deep, false, slog.LevelDebug},
		{"disabled-deep-ctx-used", deep, true, slog.LevelDebug},
		{"request-debug", ctxattrs.WithLevel(shallow, slog.LevelDebug), true, slog.LevelDebug},
		{"request-info", ctxattrs.WithLevel(shallow, slog.LevelDebug), true, slog.LevelInfo},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.used {
				_ = ctxattrs.WithLevel(context.Background(), slog.LevelDebug) // some request, somewhere
			} else {
				reqlevel.Forget()
			}
			h := asyncbus.NewHandler(io.Discard, nil)
			l := slog.New(h)
			b.ReportAllocs()
			seq := logEach(tc.ctx, b, l, tc.level)
			if !h.Enabled(tc.ctx, tc.level) {
				seq = 0
			}
			closeWritten(b, h, seq)
		})
	}
	_ = ctxattrs.WithLevel(context.Background(), slog.LevelDebug) // leave levels honoured for later tests
}

// requestContext returns a context n values deep, none a request level,
// below a cancelable one (as a server's request context is).
func requestContext(n int) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	_ = cancel // never canceled: the benchmark only reads it
	for i := range n {
		ctx = context.WithValue(ctx, requestKey(i), i)
	}
	return ctx
}

// requestKey is a context key of requestContext's values.
type requestKey int
