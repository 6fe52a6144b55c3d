package harness

import (
	"math"
	"sort"
)

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, ascending values: the smallest value such that at least p % of
// the values are <= it. It returns 0 for an empty slice; p <= 0 gives the
// minimum.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	if p <= 0 || math.IsNaN(p) {
		return sorted[0]
	}
	// The epsilon keeps p/100*n from rounding up past an exact rank
	// (99.9/100*1000 is 999.0000000000001 in float64).
	rank := int(math.Ceil(p/100*float64(len(sorted)) - 1e-9))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

// Median returns the median of v (the mean of the two middle values for an
// even count), or 0 for an empty slice. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Summary is the median of a contestant's repeats at one goroutine count,
// except for the line accounting, which is the worst repeat's.
//
// The figure fields mean what Sample's fields of the same name mean.
type Summary struct {
	Contestant string `json:"contestant"` // the contestant's Name
	Goroutines int    `json:"goroutines"` // producer goroutines
	Runs       int    `json:"runs"`       // repeats summarised
	N          int    `json:"n"`          // records per run
	Discards   bool   `json:"discards"`   // the contestant writes nothing on purpose

	RecordsPerSec   float64 `json:"records_per_sec"`
	NsPerCall       float64 `json:"ns_per_call"`
	P50NS           float64 `json:"p50_ns"`
	P99NS           float64 `json:"p99_ns"`
	P999NS          float64 `json:"p999_ns"`
	MaxNS           float64 `json:"max_ns"`
	AllocsPerRecord float64 `json:"allocs_per_record"`
	BytesPerRecord  float64 `json:"alloc_bytes_per_record"`
	CPUPerRecordNS  float64 `json:"cpu_per_record_ns"`
	PeakRSSBytes    float64 `json:"peak_rss_bytes"`
	IdleCPUPercent  float64 `json:"idle_cpu_percent"`

	// The worst run's file: the one with the most records unaccounted
	// for, then the most lost.
	Lines           int64  `json:"worst_lines"`
	Lost            int64  `json:"worst_lost"`
	DroppedReported uint64 `json:"worst_dropped_reported"`
	Unaccounted     int64  `json:"worst_unaccounted"`
	// Verified is true when every run's file verified (LineCount.Verified).
	Verified bool `json:"verified"`
}

// Summarize groups samples by (contestant, goroutines) and returns one
// Summary per group, ordered by goroutines, then by the first appearance
// of the contestant in samples.
func Summarize(samples []Sample) []Summary {
	type key struct {
		c string
		g int
	}
	order := map[string]int{}
	groups := map[key][]Sample{}
	var keys []key
	for _, s := range samples {
		if _, ok := order[s.Contestant]; !ok {
			order[s.Contestant] = len(order)
		}
		k := key{s.Contestant, s.Goroutines}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	sort.SliceStable(keys, func(a, b int) bool {
		if keys[a].g != keys[b].g {
			return keys[a].g < keys[b].g
		}
		return order[keys[a].c] < order[keys[b].c]
	})
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		med := func(f func(Sample) float64) float64 {
			v := make([]float64, len(g))
			for i, s := range g {
				v[i] = f(s)
			}
			return Median(v)
		}
		sum := Summary{
			Contestant: k.c, Goroutines: k.g, Runs: len(g), N: g[0].N, Discards: g[0].Discards,
			RecordsPerSec:   med(func(s Sample) float64 { return s.RecordsPerSec }),
			NsPerCall:       med(func(s Sample) float64 { return s.NsPerCall }),
			P50NS:           med(func(s Sample) float64 { return float64(s.P50NS) }),
			P99NS:           med(func(s Sample) float64 { return float64(s.P99NS) }),
			P999NS:          med(func(s Sample) float64 { return float64(s.P999NS) }),
			MaxNS:           med(func(s Sample) float64 { return float64(s.MaxNS) }),
			AllocsPerRecord: med(func(s Sample) float64 { return s.AllocsPerRecord }),
			BytesPerRecord:  med(func(s Sample) float64 { return s.BytesPerRecord }),
			CPUPerRecordNS:  med(func(s Sample) float64 { return s.CPUPerRecordNS }),
			PeakRSSBytes:    med(func(s Sample) float64 { return float64(s.PeakRSSBytes) }),
			IdleCPUPercent:  med(func(s Sample) float64 { return s.IdleCPUPercent }),
			Verified:        true,
		}
		// Lines, Lost, DroppedReported and Unaccounted come from one run,
		// the worst, so that the row adds up: lines + dropped +
		// unaccounted = N.
		worst := g[0]
		for _, s := range g {
			if abs64(s.Unaccounted) > abs64(worst.Unaccounted) ||
				(abs64(s.Unaccounted) == abs64(worst.Unaccounted) && s.Lost > worst.Lost) {
				worst = s
			}
			sum.Verified = sum.Verified && s.Count.Verified()
		}
		sum.Lines, sum.Lost, sum.Unaccounted = worst.Count.Lines, worst.Lost, worst.Unaccounted
		sum.DroppedReported = worst.Count.MarkerDropped
		out = append(out, sum)
	}
	return out
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
