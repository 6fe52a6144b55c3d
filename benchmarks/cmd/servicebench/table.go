package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// printTable writes one scenario's table: the medians of the rounds, the
// spread of the per-request tail across rounds, and the losses summed.
func printTable(w io.Writer, scenario string, conns int, entries []entry, res map[string][]runResult) {
	fmt.Fprintf(w, "## %s, %d connections\n\n", scenario, conns)
	fmt.Fprintln(w, "| back end | req/s | ×slog | log p50 | log p99 | log p99.9 | log max | p99.9 range | max range | Error p50 | Error max | CPU µs/req | lost (marked) | close |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	base := 0.0
	if len(res["slog-file"]) > 0 {
		base = median(res["slog-file"], runResult.reqPerSec)
	}
	for _, e := range entries {
		rs := res[e.name]
		if len(rs) == 0 {
			continue
		}
		rps := median(rs, runResult.reqPerSec)
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", rps/base)
		}
		var lost int64
		var marked uint64
		for _, r := range rs {
			lost += r.lost()
			marked += r.marked
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %v | %v | %v | %v | %v | %v | %v | %v | %.1f | %d (%d) | %v |\n",
			e.name, rps, ratio,
			dmedian(rs, func(r runResult) time.Duration { return r.server.P50 }),
			dmedian(rs, func(r runResult) time.Duration { return r.server.P99 }),
			dmedian(rs, func(r runResult) time.Duration { return r.server.P999 }),
			dmedian(rs, func(r runResult) time.Duration { return r.server.Max }),
			spread(rs, func(r runResult) time.Duration { return r.server.P999 }),
			spread(rs, func(r runResult) time.Duration { return r.server.Max }),
			dmedian(rs, func(r runResult) time.Duration { return r.server.ErrP50 }),
			slices.MaxFunc(rs, func(a, b runResult) int { return int(a.server.ErrMax - b.server.ErrMax) }).server.ErrMax.Round(time.Microsecond),
			median(rs, func(r runResult) float64 {
				return float64(r.server.CPU.Microseconds()) / float64(max(r.server.Requests, 1))
			}),
			lost, marked,
			slices.MaxFunc(rs, func(a, b runResult) int { return int(a.server.CloseTime - b.server.CloseTime) }).server.CloseTime.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
}

func median(rs []runResult, f func(runResult) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func dmedian(rs []runResult, f func(runResult) time.Duration) time.Duration {
	return time.Duration(median(rs, func(r runResult) float64 { return float64(f(r)) })).Round(time.Microsecond)
}

// spread is the range of f over the rounds.
func spread(rs []runResult, f func(runResult) time.Duration) string {
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return fmt.Sprintf("%v–%v", lo.Round(time.Microsecond), hi.Round(time.Microsecond))
}
