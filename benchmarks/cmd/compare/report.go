package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// loadAverage returns the 1, 5 and 15 minute load averages as
// /proc/loadavg gives them, or "unknown" where it does not exist.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// describeRun says when and on what the figures were taken, and how loaded
// the machine was before and after.
func describeRun(res *harness.Results, loadBefore, loadAfter string) string {
	m := res.Machine
	model := m.CPUModel
	if model == "" {
		model = "unknown CPU"
	}
	return fmt.Sprintf("Measured %s (UTC) on %s, %d logical CPUs (GOMAXPROCS %d), %s/%s, %s; "+
		"the run took %v. Load average (1/5/15 min) before the run: %s; after: %s.\n",
		res.Started.UTC().Format("2006-01-02 15:04"), model, m.NumCPU, m.GOMAXPROCS, m.GOOS, m.GOARCH, m.GoVersion,
		time.Duration(res.WallNS).Round(time.Second), loadBefore, loadAfter) + shapeNote(res.Shape)
}

// shapeNote says which record the run logged when it is not the reference.
func shapeNote(shape string) string {
	if shape != harness.ShapeStructs {
		return ""
	}
	return "\nRecord: the ~1 KB structs record (-shape " + shape + "): a struct, ten structs with a time.Time each, " +
		"a []string, a []int, a time.Time and an error, through slog.Logger.LogAttrs.\n"
}

// notes explains the figures that the generic table cannot: zerolog's
// losses next to what its diode reported, and the idle CPU of contestants
// whose only flush is a Close.
func notes(res *harness.Results) string {
	var b strings.Builder
	b.WriteString("### Notes\n\n")
	b.WriteString("- zerolog-diode and phuslu-async have no flush but Close, so their flush closes them: their idle CPU " +
		"is measured with their writer goroutine already stopped (both park on a channel or a 10 ms poll when open).\n")
	b.WriteString("- zap-buffered uses zap.NewProductionEncoderConfig (epoch-seconds float time); everyone else writes an RFC 3339 time.\n")
	var rows []string
	for _, g := range res.Goroutines {
		var worst *harness.Sample
		for i := range res.Samples {
			s := &res.Samples[i]
			if s.Contestant == contestants.Zerolog && s.Goroutines == g && (worst == nil || s.Lost > worst.Lost) {
				worst = s
			}
		}
		if worst == nil {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %d | %d of %d | %.1f %% | %d |", g, worst.Lost, worst.N,
			100*float64(worst.Lost)/float64(worst.N), worst.HandlerStats["Missed"]))
	}
	if len(rows) > 0 {
		b.WriteString("\nzerolog's diode overwrites records when its reader falls behind. Lost lines, counted in the file " +
			"(worst run), next to the sum its alert func was told (which also counts slots skipped on a \"diode set collision\"):\n\n")
		b.WriteString("| goroutines | lost | lost % | diode alert count |\n|---:|---:|---:|---:|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	return b.String()
}

// target is one of the performance goals for asyncbus-block at one
// goroutine count, against one peer (or the best lossless peer when peer
// is empty).
type target struct {
	goroutines int
	peer       string  // contestant name; "" = the best lossless peer at that count
	speedup    float64 // asyncbus-block records/s ÷ the peer's must be at least this
	p99Frac    float64 // asyncbus-block P99 must be under this × the peer's; 0 = no latency goal
}

// issueTargets are the performance issue's goals: 2× phuslu/log at 1 and 4
// goroutines, 2× zap at 4, 3× slog on the file everywhere, and at 16
// goroutines (stated for 16 cores) 2.5× the best lossless peer with a tenth
// of its P99.
var issueTargets = []target{
	{1, contestants.Phuslu, 2, 0},
	{4, contestants.Phuslu, 2, 0},
	{4, contestants.Zap, 2, 0},
	{1, contestants.SlogFile, 3, 0},
	{4, contestants.SlogFile, 3, 0},
	{16, contestants.SlogFile, 3, 0},
	{16, "", 2.5, 0.1},
}

// ShareLimitNS is the goal for asyncbus's share of a call at 1 goroutine:
// its ns per call minus the no-op floor's.
const ShareLimitNS = 150

// DurableFrac is the goal for the durable ring: at least this fraction of
// the heap ring's records/s.
const DurableFrac = 0.9

// isPeer reports whether a contestant counts as a peer for the targets:
// everyone but asyncbus itself and the no-op floor.
func isPeer(s harness.Summary) bool {
	return !s.Discards && !strings.HasPrefix(s.Contestant, "asyncbus")
}

// bestLossless returns the fastest peer at g whose every run wrote every
// record and verified.
func bestLossless(res *harness.Results, g int) (harness.Summary, bool) {
	var best harness.Summary
	found := false
	for _, s := range res.Summaries {
		if s.Goroutines != g || !isPeer(s) || s.Lost != 0 || !s.Verified {
			continue
		}
		if !found || s.RecordsPerSec > best.RecordsPerSec {
			best, found = s, true
		}
	}
	return best, found
}

// yesNo renders a verdict.
func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// targets checks the goals against the medians and says, for each,
// whether this run met it.
func targets(res *harness.Results) string {
	var b strings.Builder
	b.WriteString("### The targets\n\n")
	fmt.Fprintf(&b, "Measured on %d logical CPUs; the 16-goroutine targets are stated for 16 cores.\n\n", runtime.NumCPU())
	b.WriteString("| goroutines | peer | its records/s | its P99 | asyncbus-block | ratio (target) | asyncbus P99 (target) | met |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---|\n")
	measured := false
	for _, t := range issueTargets {
		var peer harness.Summary
		var ok bool
		if t.peer == "" {
			peer, ok = bestLossless(res, t.goroutines)
		} else {
			peer, ok = res.SummaryOf(t.peer, t.goroutines)
		}
		ab, ok2 := res.SummaryOf(contestants.AsyncbusBlock, t.goroutines)
		if !ok || !ok2 || peer.RecordsPerSec == 0 {
			continue
		}
		measured = true
		ratio := ab.RecordsPerSec / peer.RecordsPerSec
		met := ratio >= t.speedup && ab.Lost == 0
		lat := "—"
		if t.p99Frac > 0 {
			limit := t.p99Frac * peer.P99NS
			lat = fmt.Sprintf("%s (< %s)", harness.FormatDuration(ab.P99NS), harness.FormatDuration(limit))
			met = met && ab.P99NS < limit
		}
		fmt.Fprintf(&b, "| %d | %s | %.2f M/s | %s | %.2f M/s | %.2f× (≥ %.1f×) | %s | %s |\n",
			t.goroutines, peer.Contestant, peer.RecordsPerSec/1e6, harness.FormatDuration(peer.P99NS), ab.RecordsPerSec/1e6,
			ratio, t.speedup, lat, yesNo(met))
	}
	if !measured {
		b.WriteString("| — | not measured (needs asyncbus-block and its peers at the same goroutine counts) | | | | | | |\n")
	}
	b.WriteString("\n")
	b.WriteString(shares(res))
	for _, g := range res.Goroutines {
		if s, ok := res.SummaryOf(contestants.AsyncbusBlock, g); ok {
			fmt.Fprintf(&b, "- asyncbus-block, %s: %d lost (target 0).\n", goroutines(g), s.Lost)
		}
		if s, ok := res.SummaryOf(contestants.AsyncbusDrop, g); ok {
			fmt.Fprintf(&b, "- asyncbus-drop, %s: %d in the file + %d in drop markers = %d of %d (target: all).\n",
				goroutines(g), s.Lines, s.DroppedReported, s.Lines+int64(s.DroppedReported), s.N)
		}
		d, okD := res.SummaryOf(contestants.AsyncbusDurable, g)
		h, okH := res.SummaryOf(contestants.AsyncbusBlock, g)
		if okD && okH && h.RecordsPerSec > 0 {
			frac := d.RecordsPerSec / h.RecordsPerSec
			fmt.Fprintf(&b, "- asyncbus-durable, %s: %.2f× the heap ring's records/s (target ≥ %.2f×: %s), %d lost.\n",
				goroutines(g), frac, DurableFrac, yesNo(frac >= DurableFrac && d.Lost == 0), d.Lost)
		}
	}
	return b.String()
}

// shares reports asyncbus's share of a call next to the no-op floor: the
// whole call through slog.Logger minus what slog's own front end costs with
// a handler that does nothing, per goroutine count.
func shares(res *harness.Results) string {
	var b strings.Builder
	var rows []string
	for _, g := range res.Goroutines {
		if g > res.Machine.NumCPU && res.Machine.NumCPU > 0 {
			continue // more producers than CPUs: a call's ns is mostly waiting for a CPU
		}
		floor, ok := res.SummaryOf(contestants.Noop, g)
		if !ok {
			continue
		}
		for _, name := range []string{contestants.AsyncbusBlock, contestants.AsyncbusDurable, contestants.Phuslu, contestants.Zap, contestants.SlogFile} {
			s, ok := res.SummaryOf(name, g)
			if !ok {
				continue
			}
			share := s.NsPerCall - floor.NsPerCall
			goal := ""
			if name == contestants.AsyncbusBlock && g == 1 {
				goal = fmt.Sprintf(" (target ≤ %d ns: %s)", ShareLimitNS, yesNo(share <= ShareLimitNS))
			}
			rows = append(rows, fmt.Sprintf("| %d | %s | %.0f ns | %.0f ns | %.0f ns%s |", g, name, s.NsPerCall, floor.NsPerCall, share, goal))
		}
	}
	if len(rows) == 0 {
		return ""
	}
	b.WriteString("The handler's share of a call: ns per call minus the no-op floor (slog.Logger's own front end) at the same goroutine count " +
		"(goroutine counts up to the number of CPUs).\n\n")
	b.WriteString("| goroutines | contestant | ns per call | no-op floor | share |\n|---:|---|---:|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n\n")
	return b.String()
}

// goroutines says "1 goroutine" or "n goroutines".
func goroutines(g int) string {
	if g == 1 {
		return "1 goroutine"
	}
	return fmt.Sprintf("%d goroutines", g)
}
