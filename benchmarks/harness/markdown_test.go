package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func testResults() *Results {
	samples := []Sample{
		sampleFor("slog|file", 1, 1, 250e3, 0), sampleFor("fast", 1, 1, 1.5e6, 0), sampleFor("noop", 1, 1, 9e6, 0),
		sampleFor("slog|file", 16, 1, 200e3, 0), sampleFor("fast", 16, 1, 2e6, 3), sampleFor("noop", 16, 1, 12e6, 0),
	}
	samples[2].Discards, samples[5].Discards = true, true
	samples[4].Count.MarkerDropped = 3
	samples[4].Unaccounted = 0
	samples[1].Count.Duplicates = 1
	return &Results{
		Machine: Machine{GOOS: "linux", GOARCH: "amd64", NumCPU: 2, GOMAXPROCS: 2, GoVersion: "go1.26", CPUModel: "Test <CPU> & co"},
		N:       100, Goroutines: []int{1, 16}, Repeat: 1, IdleNS: int64(time.Second), SampleEvery: 1,
		Contestants: []string{"slog|file", "fast", "noop"},
		Samples:     samples, Summaries: Summarize(samples),
		Failures: []string{"broken, 4 goroutines, rep 1: boom"},
	}
}

func TestMarkdown(t *testing.T) {
	r := testResults()
	md := r.Markdown("slog|file")
	assert.Contains(t, md, "### 1 goroutine\n")
	assert.Contains(t, md, "### 16 goroutines\n")
	assert.Contains(t, md, "Test <CPU> & co")
	assert.Contains(t, md, `vs slog\|file`)
	assert.Contains(t, md, "| fast | 1.50 M/s | 6.00× |")
	assert.Contains(t, md, "| fast | 2.00 M/s | 10.00× |")
	assert.Contains(t, md, "| slog\\|file | 250 k/s | 1.00× |")
	assert.Contains(t, md, "n/a (discards)")
	assert.Contains(t, md, "| 97 | 3 | 3 |", "lines, lost, dropped of the dropping run")
	assert.Contains(t, md, "| 100 * |", "unverified lines are flagged")
	assert.Contains(t, md, "- broken, 4 goroutines, rep 1: boom")
	for _, table := range strings.Split(md, "### ")[1:] {
		var rows int
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, "|") {
				assert.Equal(t, 16, strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"), "cells in %q", l)
			}
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| contestant") {
				rows++
				assert.Equal(t, 16, strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"), "cells in %q", l)
			}
		}
		assert.Equal(t, 3, rows)
	}
	noBase := r.Markdown("")
	assert.NotContains(t, noBase, "vs ")
}
