package harness

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// palette gives each contestant a colour, in order, repeating.
var palette = []string{"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#7f7f7f", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

// SVG geometry.
const (
	svgW, svgH        = 1000, 470
	panelW, panelH    = 400, 300
	panelTop          = 60
	leftPanelX        = 90
	rightPanelX       = 580
	legendY           = panelTop + panelH + 70
	legendItemW       = 190
	latencyPercentile = 3 // P50, P99, P99.9
)

// SVG renders a chart of the results with no dependencies: on the left,
// records/s against goroutines, one line per contestant; on the right,
// P50/P99/P99.9 call latency per contestant at the largest goroutine
// count. Both vertical axes are logarithmic.
func (r *Results) SVG() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgW, svgH)
	m := r.Machine
	title := fmt.Sprintf("asyncbus-bench: %d records/run, median of %d, %s/%s %d CPUs", r.N, r.Repeat, m.GOOS, m.GOARCH, m.NumCPU)
	if m.CPUModel != "" {
		title += " (" + m.CPUModel + ")"
	}
	text(&b, svgW/2, 24, "middle", 14, "bold", title)

	color := map[string]string{}
	for i, c := range r.Contestants {
		color[c] = palette[i%len(palette)]
	}
	r.throughputPanel(&b, color)
	r.latencyPanel(&b, color)

	// Legend.
	perRow := svgW / legendItemW
	for i, c := range r.Contestants {
		x := 40 + (i%perRow)*legendItemW
		y := legendY + (i/perRow)*20
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/>`+"\n", x, y-9, color[c])
		text(&b, x+20, y, "start", 12, "normal", c)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// logAxis maps positive values onto a panel's height by decades.
type logAxis struct{ lo, hi float64 } // decade exponents, lo < hi

func newLogAxis(vals []float64) logAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			lo = math.Min(lo, math.Log10(v))
			hi = math.Max(hi, math.Log10(v))
		}
	}
	if math.IsInf(lo, 1) {
		return logAxis{0, 1}
	}
	a := logAxis{math.Floor(lo), math.Ceil(hi)}
	if a.hi <= a.lo {
		a.hi = a.lo + 1
	}
	return a
}

// y returns the vertical pixel offset from the panel top for v.
func (a logAxis) y(v float64) float64 {
	if v <= 0 {
		return panelH
	}
	f := (math.Log10(v) - a.lo) / (a.hi - a.lo)
	f = math.Max(0, math.Min(1, f))
	return panelH * (1 - f)
}

// frame draws a panel's title, axes and decade grid lines.
func (a logAxis) frame(b *strings.Builder, x0 int, title, ylabel string, label func(float64) string) {
	text(b, x0+panelW/2, panelTop-12, "middle", 13, "bold", title)
	for e := a.lo; e <= a.hi; e++ {
		v := math.Pow(10, e)
		y := float64(panelTop) + a.y(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`+"\n", x0, y, x0+panelW, y)
		text(b, x0-6, int(y)+4, "end", 11, "normal", label(v))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", x0, panelTop, x0, panelTop+panelH)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", x0, panelTop+panelH, x0+panelW, panelTop+panelH)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="12" transform="rotate(-90 %d %d)">%s</text>`+"\n",
		x0-62, panelTop+panelH/2, x0-62, panelTop+panelH/2, esc(ylabel))
}

func (r *Results) throughputPanel(b *strings.Builder, color map[string]string) {
	var vals []float64
	for _, s := range r.Summaries {
		vals = append(vals, s.RecordsPerSec)
	}
	a := newLogAxis(vals)
	a.frame(b, leftPanelX, "Throughput (records/s, log scale)", "records/s", tickLabel(" /s", "k/s", "M/s", "G/s"))
	n := len(r.Goroutines)
	xOf := func(i int) float64 { return float64(leftPanelX) + float64(panelW)*(float64(i)+0.5)/float64(max(n, 1)) }
	for i, g := range r.Goroutines {
		text(b, int(xOf(i)), panelTop+panelH+18, "middle", 12, "normal", fmt.Sprint(g))
	}
	text(b, leftPanelX+panelW/2, panelTop+panelH+38, "middle", 12, "normal", "goroutines")
	for _, c := range r.Contestants {
		var pts []string
		var marks strings.Builder
		for i, g := range r.Goroutines {
			s, ok := r.SummaryOf(c, g)
			if !ok || s.RecordsPerSec <= 0 {
				continue
			}
			x, y := xOf(i), float64(panelTop)+a.y(s.RecordsPerSec)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			fmt.Fprintf(&marks, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle>`+"\n",
				x, y, color[c], esc(fmt.Sprintf("%s, %d goroutines: %s", c, g, fmtRate(s.RecordsPerSec))))
		}
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color[c])
		}
		b.WriteString(marks.String())
	}
}

func (r *Results) latencyPanel(b *strings.Builder, color map[string]string) {
	g := 0
	for _, x := range r.Goroutines {
		g = max(g, x)
	}
	var rows []Summary
	var vals []float64
	for _, c := range r.Contestants {
		if s, ok := r.SummaryOf(c, g); ok {
			rows = append(rows, s)
			vals = append(vals, s.P50NS, s.P99NS, s.P999NS)
		}
	}
	a := newLogAxis(vals)
	a.frame(b, rightPanelX, fmt.Sprintf("Call latency at %d goroutines (log scale)", g), "latency", tickLabel(" ns", " µs", " ms", " s"))
	if len(rows) == 0 {
		return
	}
	groupW := float64(panelW) / float64(len(rows))
	barW := groupW * 0.8 / latencyPercentile
	opacity := [latencyPercentile]string{"1", "0.65", "0.35"}
	names := [latencyPercentile]string{"P50", "P99", "P99.9"}
	for i, s := range rows {
		x0 := float64(rightPanelX) + groupW*float64(i) + groupW*0.1
		for k, v := range [latencyPercentile]float64{s.P50NS, s.P99NS, s.P999NS} {
			y := a.y(v)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="%s"><title>%s</title></rect>`+"\n",
				x0+barW*float64(k), float64(panelTop)+y, barW, float64(panelH)-y, color[s.Contestant], opacity[k],
				esc(fmt.Sprintf("%s %s: %s", s.Contestant, names[k], FormatDuration(v))))
		}
		text(b, int(x0+groupW*0.4), panelTop+panelH+18, "middle", 10, "normal", shorten(s.Contestant, int(groupW/6)))
	}
	// Percentile key.
	for k := range names {
		x := rightPanelX + k*70
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="14" height="10" fill="#444444" fill-opacity="%s"/>`+"\n", x, panelTop+panelH+30, opacity[k])
		text(b, x+18, panelTop+panelH+39, "start", 11, "normal", names[k])
	}
}

// tickLabel returns a formatter for decade ticks that divides by 1000 per
// unit step: 1, 10 and 100 of units[0], then of units[1], and so on.
func tickLabel(units ...string) func(float64) string {
	return func(v float64) string {
		u := 0
		for u < len(units)-1 && v >= 1000*(1-1e-9) {
			v /= 1000
			u++
		}
		return fmt.Sprintf("%.0f%s", v, units[u])
	}
}

// SummaryOf returns the summary of contestant c at g goroutines, and
// whether there is one.
func (r *Results) SummaryOf(c string, g int) (Summary, bool) {
	for _, s := range r.Summaries {
		if s.Contestant == c && s.Goroutines == g {
			return s, true
		}
	}
	return Summary{}, false
}

func shorten(s string, n int) string {
	rs := []rune(s)
	if n < 2 || len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

func text(b *strings.Builder, x, y int, anchor string, size int, weight, s string) {
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="%s" font-size="%d" font-weight="%s">%s</text>`+"\n", x, y, anchor, size, weight, esc(s))
}

// esc escapes s for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // strings.Builder never fails to write
	return b.String()
}
