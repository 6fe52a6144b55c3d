package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// baselines gives each contestant the row its ratio divides by: the same
// logger on the plain file.
var baselines = map[string]string{
	"zap-buffered": "zap-file", "zap-logwriter": "zap-file",
	"zerolog-diode": "zerolog-file", "zerolog-logwriter": "zerolog-file",
	"logrus-logwriter": "logrus-file", "stdlog-logwriter": "stdlog-file",
}

func rps(s sample) float64                        { return s.rps }
func p99(s sample) time.Duration                  { return s.p99 }
func p999(s sample) time.Duration                 { return s.p999 }
func lost(s sample) int64                         { return s.lost }
func counted(s sample) int64                      { return s.counted }
func nsPerCall(s sample) float64                  { return s.nsPerCall }
func cpu(s sample) time.Duration                  { return s.cpu }
func mrps(v float64) string                       { return fmt.Sprintf("%.3f M/s", v/1e6) }
func micros(d time.Duration) string               { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
func cpuMicros(d time.Duration) string            { return fmt.Sprintf("%.2f µs", float64(d.Nanoseconds())/1e3) }
func ratio(a, b float64) string                   { return fmt.Sprintf("%.2f×", a/b) }
func yes(ok bool) string                          { return map[bool]string{true: "yes", false: "no"}[ok] }
func (r results) med(name string, g int) []sample { return r.samples[key{name, g}] }

// report writes the markdown report: the table, the targets and the
// cost per record.
func (r results) report(w io.Writer, n, rounds int) {
	fmt.Fprintf(w, "%d records per run, %d rounds (medians; lost: the worst run), GOMAXPROCS %d, %s", n, rounds, runtime.GOMAXPROCS(0), runtime.Version())
	if slowWrite > 0 {
		fmt.Fprintf(w, ", every write to the file %v slower", slowWrite)
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintln(w, "| goroutines | contestant | records/s | vs the same logger on the file | CPU per record | caller p99 | caller p99.9 | lost |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, g := range r.counts {
		for _, name := range r.names {
			ss := r.med(name, g)
			vs := "—"
			if base, ok := baselines[name]; ok && r.med(base, g) != nil {
				vs = ratio(median(ss, rps), median(r.med(base, g), rps))
			}
			lostCol := fmt.Sprint(worst(ss, lost))
			if c := worst(ss, counted); c > 0 {
				lostCol += fmt.Sprintf(" (its counter: %d)", c)
			} else if worst(ss, lost) > 0 {
				lostCol += " (unreported)"
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", g, name, mrps(median(ss, rps)), vs, cpuMicros(median(ss, cpu)), micros(median(ss, p99)), micros(median(ss, p999)), lostCol)
		}
	}
	r.targets(w)
	r.shares(w)
}

// targets writes the two throughput targets where their rows ran.
func (r results) targets(w io.Writer) {
	fmt.Fprintln(w, "\nTargets:")
	for _, g := range []int{1, 4} {
		lw, diode := r.med("zerolog-logwriter", g), r.med("zerolog-diode", g)
		if lw == nil || diode == nil {
			continue
		}
		x := median(lw, rps) / median(diode, rps)
		fmt.Fprintf(w, "- zerolog + the writer, %d goroutine(s): %.2f× the diode's records/s (target ≥ 0.90×: %s), %d lost (the diode: %d); CPU per record %s against %s (%s).\n",
			g, x, yes(x >= 0.9), worst(lw, lost), worst(diode, lost), cpuMicros(median(lw, cpu)), cpuMicros(median(diode, cpu)), cpuRatio(lw, diode))
	}
	if lw, bws := r.med("zap-logwriter", 4), r.med("zap-buffered", 4); lw != nil && bws != nil {
		x := median(lw, rps) / median(bws, rps)
		pl, pb := median(lw, p99), median(bws, p99)
		fmt.Fprintf(w, "- zap + the writer, 4 goroutines: %.2f× BufferedWriteSyncer's records/s (target ≥ 1.30×: %s), %d lost, caller p99 %s against %s (lower: %s); CPU per record %s against %s (%s).\n",
			x, yes(x >= 1.3), worst(lw, lost), micros(pl), micros(pb), yes(pl < pb), cpuMicros(median(lw, cpu)), cpuMicros(median(bws, cpu)), cpuRatio(lw, bws))
	}
	r.ceilings(w)
}

// cpuRatio says how the CPU per record of a compares with b's: the
// records/s ratio a machine whose CPUs do nothing else would give, where
// the CPUs are the limit (4 goroutines on 2 cores).
func cpuRatio(a, b []sample) string {
	ca, cb := median(a, cpu), median(b, cpu)
	if ca <= 0 || cb <= 0 {
		return "no CPU figures here"
	}
	return fmt.Sprintf("%.2f× the records/s on CPUs that do nothing else", float64(cb)/float64(ca))
}

// ceilings writes, per goroutine count, what no output can beat: each
// logger into io.Discard (its encoding alone, nothing written), as a ratio
// to the peer output the writer is measured against.
func (r results) ceilings(w io.Writer) {
	for _, p := range [][3]string{{"zap-discard", "zap-buffered", "BufferedWriteSyncer"}, {"zerolog-discard", "zerolog-diode", "the diode"}} {
		for _, g := range r.counts {
			d, peer := r.med(p[0], g), r.med(p[1], g)
			if d == nil || peer == nil {
				continue
			}
			fmt.Fprintf(w, "- ceiling, %d goroutine(s): %s (the logger into io.Discard, nothing written) is %s and %.2f× %s's records/s; CPU per record %s against %s (%s).\n",
				g, p[0], mrps(median(d, rps)), median(d, rps)/median(peer, rps), p[2], cpuMicros(median(d, cpu)), cpuMicros(median(peer, cpu)), cpuRatio(d, peer))
		}
	}
}

// shares writes the cost per record at 1 goroutine: the writer's (a call
// through the writer into the file minus the same logger into io.Discard)
// against the handler's (slog into asyncbus minus slog's own floor).
func (r results) shares(w io.Writer) {
	h, floor := r.med("slog-asyncbus", 1), r.med("slog-noop", 1)
	if h == nil || floor == nil {
		return
	}
	hs := median(h, nsPerCall) - median(floor, nsPerCall)
	fmt.Fprintln(w, "\nCost per record, 1 goroutine (mean ns per call; share: minus the floor of the same front end):")
	fmt.Fprintln(w, "\n| row | ns per call | floor | share |\n|---|---:|---:|---:|")
	fmt.Fprintf(w, "| slog + asyncbus handler (file) | %.0f | %.0f (slog, no-op handler) | %.0f |\n", median(h, nsPerCall), median(floor, nsPerCall), hs)
	for _, p := range [][2]string{{"zap-logwriter", "zap-discard"}, {"zerolog-logwriter", "zerolog-discard"}} {
		lw, d := r.med(p[0], 1), r.med(p[1], 1)
		if lw == nil || d == nil {
			continue
		}
		s := median(lw, nsPerCall) - median(d, nsPerCall)
		fmt.Fprintf(w, "| %s (file) | %.0f | %.0f (%s) | %.0f (≤ the handler's %.0f: %s) |\n", p[0], median(lw, nsPerCall), median(d, nsPerCall), p[1], s, hs, yes(s <= hs))
	}
}
