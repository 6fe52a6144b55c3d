package harness

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the results as Markdown: a short description of the
// machine and the workload, then one table per goroutine count, then the
// failures if any. baseline, if it names a contestant, adds a column with
// each contestant's records/s relative to it.
func (r *Results) Markdown(baseline string) string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %s/%s, %d CPUs (GOMAXPROCS %d)", m.GOOS, m.GOARCH, m.NumCPU, m.GOMAXPROCS)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, ", %s", m.CPUModel)
	}
	fmt.Fprintf(&b, ", %s.\n\n", m.GoVersion)
	iso := "in-process (peak RSS is the process high-water mark)"
	if r.Isolated {
		iso = "each in its own child process"
	}
	record := "reference records (~200 B, 7 attributes)"
	if r.Shape == ShapeStructs {
		record = "structs records (~1 KB: a struct, ten structs, a []string, a []int, a time.Time, an error, and seq)"
	}
	fmt.Fprintf(&b, "Workload: %d %s per run through slog.Logger.LogAttrs into a temporary file; "+
		"median of %d alternating runs, %s; call latency sampled every %d call(s); idle window %v.",
		r.N, record, r.Repeat, iso, r.SampleEvery, time.Duration(r.IdleNS))
	if r.Label != "" {
		fmt.Fprintf(&b, " %s", r.Label)
	}
	b.WriteString("\n")

	hasBase := false
	for _, s := range r.Summaries {
		hasBase = hasBase || (baseline != "" && s.Contestant == baseline)
	}
	unverified := false
	for _, g := range r.Goroutines {
		var rows []Summary
		var base float64
		for _, s := range r.Summaries {
			if s.Goroutines == g {
				rows = append(rows, s)
				if s.Contestant == baseline {
					base = s.RecordsPerSec
				}
			}
		}
		if len(rows) == 0 {
			continue
		}
		plural := "s"
		if g == 1 {
			plural = ""
		}
		fmt.Fprintf(&b, "\n### %d goroutine%s\n\n", g, plural)
		b.WriteString("| contestant | records/s |")
		sep := "|---|---:|"
		if hasBase {
			fmt.Fprintf(&b, " vs %s |", mdEscape(baseline))
			sep += "---:|"
		}
		b.WriteString(" ns/call | P50 | P99 | P99.9 | max | allocs/rec | CPU/rec | peak RSS | idle CPU | lines | lost | dropped (markers) |\n")
		b.WriteString(sep + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range rows {
			fmt.Fprintf(&b, "| %s | %s |", mdEscape(s.Contestant), fmtRate(s.RecordsPerSec))
			if hasBase {
				if base > 0 {
					fmt.Fprintf(&b, " %.2f× |", s.RecordsPerSec/base)
				} else {
					b.WriteString(" — |")
				}
			}
			lines, lost, dropped := fmt.Sprint(s.Lines), fmt.Sprint(s.Lost), fmt.Sprint(s.DroppedReported)
			if s.Discards {
				lost, dropped = "n/a (discards)", "—"
			} else if s.Unaccounted != 0 {
				dropped += fmt.Sprintf(" (unaccounted %d)", s.Unaccounted)
			}
			if !s.Verified {
				lines += " *"
				unverified = true
			}
			fmt.Fprintf(&b, " %.0f ns | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s |\n",
				s.NsPerCall, FormatDuration(s.P50NS), FormatDuration(s.P99NS), FormatDuration(s.P999NS), FormatDuration(s.MaxNS),
				s.AllocsPerRecord, FormatDuration(s.CPUPerRecordNS), fmtBytes(s.PeakRSSBytes),
				fmtPercent(s.IdleCPUPercent, r.IdleNS), lines, lost, dropped)
		}
	}
	b.WriteString("\nlines, lost and dropped are the worst run's: lost = records − lines counted in the file; dropped = sum of the counts in " +
		"drop-marker lines; unaccounted = records − lines − dropped (shown when not 0). Idle CPU is % of one core while the handler sits open with nothing to log.\n")
	if unverified {
		b.WriteString("\n\\* some lines carried a duplicate, unreadable or foreign seq; see results.json.\n")
	}
	if len(r.Failures) > 0 {
		b.WriteString("\nFailed runs:\n\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "- %s\n", mdEscape(f))
		}
	}
	return b.String()
}

// mdEscape keeps a cell's text from breaking the table.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// fmtRate writes records/s as "684 k/s", "1.01 M/s" or "12 /s".
func fmtRate(x float64) string {
	if x < 1e3 {
		return FormatCount(x) + " /s"
	}
	return FormatCount(x) + "/s"
}

// FormatCount writes a count (such as records per second) as "684 k",
// "1.01 M" or "12".
func FormatCount(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.0f k", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}

// FormatDuration renders a duration in nanoseconds as the tables show it:
// "850 ns", "1.5 µs", "2.25 ms" or "1.20 s".
func FormatDuration(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	default:
		return fmt.Sprintf("%.2f s", ns/1e9)
	}
}

func fmtBytes(b float64) string {
	switch {
	case b <= 0:
		return "n/a"
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
}

func fmtPercent(p float64, window int64) string {
	if window <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f %%", p)
}
