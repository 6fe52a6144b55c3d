package encode

import (
	"context"
	"log/slog"
	"runtime"
	"testing"

	ref "github.com/asyncbus/asyncbus/internal/reference"
	"github.com/asyncbus/asyncbus/internal/threadcpu"
)

// threadCPU returns the CPU time the calling OS thread has used, in ns.
func threadCPU(b *testing.B) int64 {
	ns, ok := threadcpu.Now()
	if !ok {
		b.Fatal("no thread CPU time on this system")
	}
	return ns
}

// BenchmarkReference encodes the reference record (benchmarks/harness's
// ReferenceRecord: the same time, level, message and seven attributes) in
// each fast-path format. Besides sec/op (wall time) it reports cpu-ns/op,
// the encoding goroutine's own thread CPU time per record: on a machine
// shared with other work, wall time also counts the time the thread sat
// descheduled, while thread CPU time does not, so cpu-ns/op is the steadier
// figure for comparing two builds.
func BenchmarkReference(b *testing.B) {
	r := record(fixedTime, slog.LevelInfo, "request handled", 0, accessLogAttrs())
	for _, f := range []Format{JSON, Text, Logfmt} {
		b.Run([]string{"JSON", "Text", "Logfmt"}[f], func(b *testing.B) {
			runtime.LockOSThread() // thread CPU time is this goroutine's only while locked
			defer runtime.UnlockOSThread()
			e := New(Options{Format: f})
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			start := threadCPU(b)
			for b.Loop() {
				buf = e.Append(buf[:0], r, nil)
			}
			b.ReportMetric(float64(threadCPU(b)-start)/float64(b.N), "cpu-ns/op")
			b.SetBytes(int64(len(buf)))
		})
	}
}

// encodeOnlyHandler is a slog.Handler that encodes each record into one
// reused buffer if it has an Encoder, and does nothing else: no bus, no
// drainer, no output.
type encodeOnlyHandler struct {
	e   *Encoder
	buf []byte
}

func (h *encodeOnlyHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *encodeOnlyHandler) Handle(_ context.Context, r slog.Record) error {
	if h.e != nil {
		h.buf = h.e.AppendRecord(h.buf[:0], &r, nil)
	}
	return nil
}
func (h *encodeOnlyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *encodeOnlyHandler) WithGroup(string) slog.Handler      { return h }

// BenchmarkReferenceThroughSlog logs the reference record as the real
// flow does, through slog.Logger.LogAttrs (runtime.Callers, Record
// building, the allocation of the attributes past the fifth), on one
// goroutine with nothing else running: "noop" with a handler that does
// nothing (slog's floor), "encode" with one that only encodes the record
// into a reused buffer (no bus, no drainer, no output). encode minus noop,
// next to BenchmarkReference/JSON, is what slog's front end does to the
// encoder's own cost. Under valgrind's callgrind with --cache-sim=yes
// --branch-sim=yes, the encoder's functions get simulated cache misses and
// branch mispredictions in each setting (benchmarks/results/perf-session5.txt).
func BenchmarkReferenceThroughSlog(b *testing.B) {
	for _, encode := range []bool{false, true} {
		b.Run(map[bool]string{false: "noop", true: "encode"}[encode], func(b *testing.B) {
			runtime.LockOSThread() // thread CPU time is this goroutine's only while locked
			defer runtime.UnlockOSThread()
			h := &encodeOnlyHandler{buf: make([]byte, 0, 1024)}
			if encode {
				h.e = New(Options{Format: JSON})
			}
			l := slog.New(h)
			ctx := context.Background()
			b.ReportAllocs()
			start := threadCPU(b)
			seq := 0
			for b.Loop() {
				a := ref.Attrs(seq)
				l.LogAttrs(ctx, slog.LevelInfo, ref.Message, a[:]...)
				seq++
			}
			b.ReportMetric(float64(threadCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
