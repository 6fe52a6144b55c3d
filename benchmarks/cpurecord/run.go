package cpurecord

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Config says what Run measures.
type Config struct {
	Contestants []Contestant // the Baseline among them
	Shapes      []Shape
	Goroutines  []int
	Rounds      int     // every contestant once per round, in a rotating order
	Scale       float64 // multiplies each Shape.N (0 means 1)
	Progress    io.Writer
}

// Cell is one contestant's figures for one shape and goroutine count over
// the rounds.
type Cell struct {
	Shape      string
	Goroutines int
	Contestant string
	Samples    []Sample  // one per round
	Ratios     []float64 // CPU per record / the baseline's, in the same round
}

// Results are a run's cells, in table order.
type Results struct {
	Rounds int
	Cells  []*Cell
}

// Run measures every contestant on every shape and goroutine count, Rounds
// times. Within a round, the contestants of one shape and goroutine count
// run back to back, their order rotating from round to round (and reversed
// every other round), so that none always runs first or after the same
// neighbour; each ratio divides by the baseline's figure of that round.
func Run(cfg Config) (*Results, error) {
	base := slices.IndexFunc(cfg.Contestants, func(c Contestant) bool { return c.Name == Baseline })
	if base < 0 {
		return nil, fmt.Errorf("cpurecord: the contestants lack the baseline %s", Baseline)
	}
	if cfg.Rounds < 1 || len(cfg.Shapes) == 0 || len(cfg.Goroutines) == 0 {
		return nil, fmt.Errorf("cpurecord: nothing to run (%d rounds, %d shapes, %d goroutine counts)", cfg.Rounds, len(cfg.Shapes), len(cfg.Goroutines))
	}
	scale := cfg.Scale
	if scale <= 0 {
		scale = 1
	}
	res := &Results{Rounds: cfg.Rounds}
	cells := map[[3]string]*Cell{}
	for _, s := range cfg.Shapes {
		for _, g := range cfg.Goroutines {
			for _, c := range cfg.Contestants {
				cell := &Cell{Shape: s.Name, Goroutines: g, Contestant: c.Name}
				cells[[3]string{s.Name, fmt.Sprint(g), c.Name}] = cell
				res.Cells = append(res.Cells, cell)
			}
		}
	}
	k := len(cfg.Contestants)
	for r := range cfg.Rounds {
		for _, s := range cfg.Shapes {
			n := max(int(float64(s.N)*scale), 1)
			for _, g := range cfg.Goroutines {
				got := make([]Sample, k)
				for i := range k {
					j := (i + r) % k
					if r%2 == 1 {
						j = (k - 1 - i + r) % k
					}
					c := cfg.Contestants[j]
					if cfg.Progress != nil {
						fmt.Fprintf(cfg.Progress, "\rround %d/%d  %-9s  %d goroutines  %-15s", r+1, cfg.Rounds, s.Name, g, c.Name)
					}
					got[j] = Measure(c, s, g, max(n, g))
				}
				for j, c := range cfg.Contestants {
					cell := cells[[3]string{s.Name, fmt.Sprint(g), c.Name}]
					cell.Samples = append(cell.Samples, got[j])
					cell.Ratios = append(cell.Ratios, got[j].CPUNS/got[base].CPUNS)
				}
			}
		}
	}
	if cfg.Progress != nil {
		fmt.Fprint(cfg.Progress, "\r\033[K")
	}
	return res, nil
}

// median returns the median of v (the mean of the middle two for an even
// count); v is not changed.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// CPU returns the cell's median CPU per record, in ns.
func (c *Cell) CPU() float64 {
	v := make([]float64, len(c.Samples))
	for i, s := range c.Samples {
		v[i] = s.CPUNS
	}
	return median(v)
}

// Wall returns the cell's median wall time per record, in ns.
func (c *Cell) Wall() float64 {
	v := make([]float64, len(c.Samples))
	for i, s := range c.Samples {
		v[i] = s.WallNS
	}
	return median(v)
}

// Ratio returns the median of the cell's per-round ratios to the baseline.
func (c *Cell) Ratio() float64 { return median(c.Ratios) }

// Markdown renders the results: one row per shape, goroutine count and
// contestant, with the median CPU and wall time per record and the median
// ratio of CPU per record to the baseline's (with its range over the
// rounds).
func (r *Results) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| shape | goroutines | contestant | CPU ns/record | wall ns/record | CPU ÷ %s (min–max of %d rounds) |\n", Baseline, r.Rounds)
	b.WriteString("|---|---:|---|---:|---:|---:|\n")
	for _, c := range r.Cells {
		ratio := "1 (baseline)"
		if c.Contestant != Baseline {
			ratio = fmt.Sprintf("**%.2f×** (%.2f–%.2f)", c.Ratio(), slices.Min(c.Ratios), slices.Max(c.Ratios))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %.0f | %.0f | %s |\n", c.Shape, c.Goroutines, c.Contestant, c.CPU(), c.Wall(), ratio)
	}
	return b.String()
}
