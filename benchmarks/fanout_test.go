package benchmarks

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// BenchmarkFanOut measures what sending each record to several asyncbus
// handlers costs the caller, on the reference record, every output at
// Info so that every record reaches all of them (the worst case), each
// writing to io.Discard:
//
//   - one: a JSON handler alone, the baseline; one-console and one-logfmt
//     the other formats alone (directN is about the sum of its formats);
//   - multi2, multi3: slog.NewMultiHandler over JSON and Console (and
//     Logfmt), each handler with its own format;
//   - direct2, direct3: the same handlers called one after the other with
//     no MultiHandler in between, the floor of any fan-out that encodes
//     once per output (one built into asyncbus included): multiN minus
//     directN is all such a fan-out could save;
//   - multi3-noop, direct3-noop: the same over handlers that do nothing,
//     MultiHandler's own cost measured without the handlers' noise;
//   - tee2: one JSON handler writing to io.MultiWriter of two outputs, the
//     floor when the outputs share a format and level (encoded once).
//
// ns/op is the log call's own cost (encoding and enqueueing, once per
// output): run with -benchtime 100000x, which the 64 MiB rings hold whole,
// and the drainers, not woken during the run (MaxLatency 10 s), write
// after the timer stops. Their writes are per output in any fan-out; on a
// 2-core machine shared with other work, letting them run in the timed
// loop only measured the scheduler.
//
// Target: multiN within 10% of directN; otherwise a fan-out inside
// asyncbus would be worth building.
func BenchmarkFanOut(b *testing.B) {
	newH := func(w io.Writer, f asyncbus.Format) *asyncbus.Handler {
		return asyncbus.NewHandler(w, &asyncbus.Options{
			Format: f, Ring: asyncbus.RingOptions{Capacity: fanOutRing, MaxLatency: 10 * time.Second, HighWatermark: 0.99, BlockTimeout: time.Hour},
		})
	}
	cases := []struct {
		name string
		make func() (slog.Handler, []*asyncbus.Handler)
	}{
		{"one", func() (slog.Handler, []*asyncbus.Handler) {
			h := newH(io.Discard, asyncbus.JSON)
			return h, []*asyncbus.Handler{h}
		}},
		{"one-console", func() (slog.Handler, []*asyncbus.Handler) {
			h := newH(io.Discard, asyncbus.Console)
			return h, []*asyncbus.Handler{h}
		}},
		{"one-logfmt", func() (slog.Handler, []*asyncbus.Handler) {
			h := newH(io.Discard, asyncbus.Logfmt)
			return h, []*asyncbus.Handler{h}
		}},
		{"multi2", func() (slog.Handler, []*asyncbus.Handler) {
			hs := []*asyncbus.Handler{newH(io.Discard, asyncbus.JSON), newH(io.Discard, asyncbus.Console)}
			return slog.NewMultiHandler(hs[0], hs[1]), hs
		}},
		{"direct2", func() (slog.Handler, []*asyncbus.Handler) {
			hs := []*asyncbus.Handler{newH(io.Discard, asyncbus.JSON), newH(io.Discard, asyncbus.Console)}
			return directFanOut{hs[0], hs[1]}, hs
		}},
		{"multi3", func() (slog.Handler, []*asyncbus.Handler) {
			hs := []*asyncbus.Handler{newH(io.Discard, asyncbus.JSON), newH(io.Discard, asyncbus.Console), newH(io.Discard, asyncbus.Logfmt)}
			return slog.NewMultiHandler(hs[0], hs[1], hs[2]), hs
		}},
		{"direct3", func() (slog.Handler, []*asyncbus.Handler) {
			hs := []*asyncbus.Handler{newH(io.Discard, asyncbus.JSON), newH(io.Discard, asyncbus.Console), newH(io.Discard, asyncbus.Logfmt)}
			return directFanOut{hs[0], hs[1], hs[2]}, hs
		}},
		// MultiHandler's own cost, without the handlers': what any
		// fan-out could save at most, free of the drainers' noise.
		{"multi3-noop", func() (slog.Handler, []*asyncbus.Handler) {
			return slog.NewMultiHandler(noopHandler{}, noopHandler{}, noopHandler{}), nil
		}},
		{"direct3-noop", func() (slog.Handler, []*asyncbus.Handler) {
			return directFanOut{noopHandler{}, noopHandler{}, noopHandler{}}, nil
		}},
		{"tee2", func() (slog.Handler, []*asyncbus.Handler) {
			h := newH(io.MultiWriter(io.Discard, io.Discard), asyncbus.JSON)
			return h, []*asyncbus.Handler{h}
		}},
	}
	r := harness.ReferenceRecord()
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h, hs := c.make()
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(ctx, r)
			}
			b.StopTimer()
			for _, x := range hs {
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fanOutRing holds a BenchmarkFanOut run of 100000 reference records
// (about 250 bytes each in the ring) without the drainer.
const fanOutRing = 64 << 20

// directFanOut calls each handler in turn, with nothing else: what a
// fan-out that encodes once per output cannot go below. Only Handle is
// used by the benchmark.
type directFanOut []slog.Handler

func (d directFanOut) Enabled(context.Context, slog.Level) bool { return true }

func (d directFanOut) Handle(ctx context.Context, r slog.Record) error {
	var err error
	for _, h := range d {
		if e := h.Handle(ctx, r); e != nil {
			err = errors.Join(err, e)
		}
	}
	return err
}

func (d directFanOut) WithAttrs([]slog.Attr) slog.Handler { return d }
func (d directFanOut) WithGroup(string) slog.Handler      { return d }
