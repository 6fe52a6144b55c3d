package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// The lines around the README's comparison table, which -readme replaces.
const (
	tableBegin = "<!-- compare-table:begin -->"
	tableEnd   = "<!-- compare-table:end -->"
)

// readmeRows are the README table's rows, in order: contestant and label.
var readmeRows = []struct{ name, label string }{
	{contestants.AsyncbusBlock, "**asyncbus, Block** (default)"},
	{contestants.AsyncbusDrop, "asyncbus, Drop"},
	{contestants.AsyncbusDurable, "asyncbus, durable ring (`Ring.File`)"},
	{contestants.Phuslu, "phuslu/log `AsyncWriter`"},
	{contestants.Zerolog, "zerolog `diode`"},
	{contestants.Zap, "zap `BufferedWriteSyncer`"},
	{contestants.LAW, "buffered channel + bufio (LAW)"},
	{contestants.SlogBufio, "`slog.JSONHandler` + `bufio.Writer`"},
	{contestants.SlogFile, "`slog.JSONHandler` on the file"},
	{contestants.MutexWrite, "mutex + one write per record"},
	{contestants.Noop, "no-op handler (slog's own front end: the floor)"},
}

// readmeTable renders res as the README's table: records/s and lines lost
// (missing from the file, reported by drop markers or not) per goroutine
// count, and the P99 call latency at the P99 column's goroutine count (4 if
// measured, else the largest).
func readmeTable(res *harness.Results) string {
	p99g := 0
	for _, g := range res.Goroutines {
		if g == 4 || p99g != 4 && g > p99g {
			p99g = g
		}
	}
	var b strings.Builder
	b.WriteString("| records/s (lines lost) |")
	for _, g := range res.Goroutines {
		fmt.Fprintf(&b, " %s |", goroutines(g))
	}
	fmt.Fprintf(&b, " P99 call latency, %s |\n|---|", goroutines(p99g))
	for range res.Goroutines {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	for _, row := range readmeRows {
		if _, ok := res.SummaryOf(row.name, res.Goroutines[0]); !ok {
			continue
		}
		bold := strings.HasPrefix(row.label, "**")
		fmt.Fprintf(&b, "| %s |", row.label)
		for _, g := range res.Goroutines {
			s, ok := res.SummaryOf(row.name, g)
			cell := "—"
			switch {
			case !ok:
			case s.Discards:
				cell = harness.FormatCount(s.RecordsPerSec)
			case s.Lost > 0:
				// Lost means what the bench command means: lines missing from
				// the file (N - lines). The cell says whether the handler
				// reported them (asyncbus's drop markers) or not.
				cell = fmt.Sprintf("%s (%s)", harness.FormatCount(s.RecordsPerSec), lostCell(s.Lost, s.Unaccounted, int64(s.N)))
			default:
				cell = fmt.Sprintf("%s (0)", harness.FormatCount(s.RecordsPerSec))
			}
			if bold && ok {
				cell = "**" + cell + "**"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		p99 := "—"
		if s, ok := res.SummaryOf(row.name, p99g); ok {
			p99 = harness.FormatDuration(s.P99NS)
			if bold {
				p99 = "**" + p99 + "**"
			}
		}
		fmt.Fprintf(&b, " %s |\n", p99)
	}
	return b.String()
}

// replaceTable returns doc with the lines between tableBegin and tableEnd
// replaced by table.
func replaceTable(doc, table string) (string, error) {
	i := strings.Index(doc, tableBegin+"\n")
	j := strings.Index(doc, "\n"+tableEnd)
	if i < 0 || j < i {
		return "", errors.New("no " + tableBegin + " ... " + tableEnd + " block")
	}
	return doc[:i+len(tableBegin)+1] + table + doc[j+1:], nil
}

// updateReadme replaces the comparison table in the README at path.
func updateReadme(path string, res *harness.Results) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := replaceTable(string(doc), readmeTable(res))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// lostCell describes lost of n lines missing from the file, unreported of
// them without a drop marker saying so; silent losses are in bold.
func lostCell(lost, unreported, n int64) string {
	pct := func(k int64) string { return fmt.Sprintf("%.1f %%", 100*float64(k)/float64(n)) }
	switch {
	case unreported <= 0:
		return pct(lost) + " lost, every one reported by a drop marker"
	case unreported >= lost:
		return "**" + pct(lost) + " lost, unreported**"
	}
	return "**" + pct(lost) + " lost, " + pct(unreported) + " unreported**"
}
