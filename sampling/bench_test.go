package sampling_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/sampling"
)

// BenchmarkHandle measures Handle of a record with two attributes into an
// asyncbus handler writing to io.Discard: "off" is the asyncbus handler
// alone (sampling not installed); "on/kept" samples but keeps every record
// (the decision's cost on top of encoding); "on/dropped" drops every record
// after the first (the whole cost of a dropped record: no encoding).
// Parallel variants log one key from every P, the worst case for the
// slot's shared counter.
func BenchmarkHandle(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request handled", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.Int("status", 200))
	ctx := context.Background()
	cases := []struct {
		name string
		cfg  *sampling.Config
	}{
		{"off", nil},
		{"on/kept", &sampling.Config{First: math.MaxInt32}},
		{"on/dropped", &sampling.Config{First: 1}},
	}
	for _, parallel := range []bool{false, true} {
		for _, bc := range cases {
			name := bc.name
			if parallel {
				name = "parallel/" + name
			}
			b.Run(name, func(b *testing.B) {
				ab := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Ring: asyncbus.RingOptions{Overflow: asyncbus.Drop}})
				defer ab.Close()
				var h slog.Handler = ab
				if bc.cfg != nil {
					sh, err := sampling.NewHandler(ab, *bc.cfg)
					if err != nil {
						b.Fatal(err)
					}
					h = sh
				}
				b.ReportAllocs()
				if !parallel {
					for b.Loop() {
						_ = h.Handle(ctx, r)
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						_ = h.Handle(ctx, r)
					}
				})
			})
		}
	}
}
