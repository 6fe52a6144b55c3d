package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/internal/benchharness"
)

// TestMain lets the test binary serve as the child process of isolated
// runs: the child is re-executed with run's arguments.
func TestMain(m *testing.M) {
	if benchharness.IsChild() {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestSmokeIsolated runs every contestant once per goroutine count, each in
// its own child process, and checks the three output files.
func TestSmokeIsolated(t *testing.T) {
	quickRaceExit(t)
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"-n", "500", "-goroutines", "1,3", "-repeat", "1", "-idle", "5ms", "-out", out}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())

	md := stdout.String()
	assert.Contains(t, md, "Measured ")
	assert.Contains(t, md, "Load average (1/5/15 min) before the run: ")
	assert.Contains(t, md, "### 3 goroutines\n")
	for _, name := range contestants.Names() {
		assert.Equal(t, 2, strings.Count(md, "\n| "+name+" |"), name)
	}
	assert.Contains(t, md, "### The issue's targets")
	assert.Contains(t, md, "| 1 | ", "target row at 1 goroutine")
	assert.Contains(t, md, "diode alert count")
	assert.NotContains(t, stderr.String(), "FAIL")

	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	require.NoError(t, err)
	var res benchharness.Results
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Samples, 2*len(contestants.Names()))
	require.Empty(t, res.Failures)
	for _, s := range res.Samples {
		assert.True(t, s.Isolated, s.Contestant)
		assert.True(t, s.Count.Verified(), s.Contestant)
		if !contestants.MayLose(s.Contestant) {
			assert.Zero(t, s.Lost, s.Contestant)
		}
	}
	mdFile, err := os.ReadFile(filepath.Join(out, "results.md"))
	require.NoError(t, err)
	assert.Contains(t, string(mdFile), md[:strings.Index(md, "\nWrote ")])
	svg, err := os.ReadFile(filepath.Join(out, "chart.svg"))
	require.NoError(t, err)
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
}

func TestFilterInProcess(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"-n", "300", "-goroutines", "2", "-repeat", "1", "-idle", "0",
		"-isolate=false", "-quiet", "-out", "", "-contestants", "ZAP, phuslu"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	assert.Empty(t, stderr.String())
	assert.Contains(t, stdout.String(), "| zap-buffered |")
	assert.Contains(t, stdout.String(), "| phuslu-async |")
	assert.NotContains(t, stdout.String(), "| noop |")
	assert.NotContains(t, stdout.String(), "Wrote ")
	assert.Contains(t, stdout.String(), "not measured", "no asyncbus, so no target row")
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"-help"}, 0, "seeds' baselines"},
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"bad goroutines", []string{"-goroutines", "1,x"}, 2, `"x" is not a positive integer`},
		{"zero goroutines", []string{"-goroutines", "0"}, 2, "not a positive integer"},
		{"empty goroutines", []string{"-goroutines", ","}, 2, "no goroutine counts"},
		{"goroutines above n", []string{"-n", "2", "-goroutines", "4"}, 2, "4 goroutines for 2 records"},
		{"zero n", []string{"-n", "0"}, 2, "-n must be"},
		{"zero repeat", []string{"-repeat", "0"}, 2, "-repeat must be"},
		{"negative idle", []string{"-idle", "-1s"}, 2, "-idle must not be negative"},
		{"zero sample-every", []string{"-sample-every", "0"}, 2, "-sample-every"},
		{"no match", []string{"-contestants", "log4j"}, 2, "matches none"},
		{"extra args", []string{"extra"}, 2, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, tt.code, run(tt.args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tt.want)
			assert.Empty(t, stdout.String())
		})
	}
}

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 16, 1,4,1 ,")
	require.NoError(t, err)
	assert.Equal(t, []int{16, 1, 4}, got)
}

func TestProblems(t *testing.T) {
	ok := benchharness.LineCount{Lines: 10, Unique: 10}
	tests := []struct {
		name string
		s    benchharness.Sample
		want string
	}{
		{"clean", benchharness.Sample{Contestant: contestants.AsyncbusBlock, N: 10, Count: ok}, ""},
		{"block lost", benchharness.Sample{Contestant: contestants.AsyncbusBlock, N: 10, Lost: 1, Unaccounted: 1, Count: ok}, "lost 1 of 10"},
		{"zap lost", benchharness.Sample{Contestant: contestants.Zap, N: 10, Lost: 2, Unaccounted: 2, Count: ok}, "lost 2 of 10"},
		{"drop reported", benchharness.Sample{Contestant: contestants.AsyncbusDrop, N: 10, Lost: 3, Count: ok}, ""},
		{"drop unreported", benchharness.Sample{Contestant: contestants.AsyncbusDrop, N: 10, Lost: 3, Unaccounted: 2, Count: ok}, "2 records neither"},
		{"diode loses by design", benchharness.Sample{Contestant: contestants.Zerolog, N: 10, Lost: 8, Unaccounted: 8, Count: ok}, ""},
		{"diode torn line", benchharness.Sample{Contestant: contestants.Zerolog, N: 10, Lost: 8, Unaccounted: 8,
			Count: benchharness.LineCount{Lines: 2, Unique: 1, Unparsed: 1}}, "does not verify"},
		{"noop", benchharness.Sample{Contestant: contestants.Noop, Discards: true, N: 10}, ""},
		{"duplicates", benchharness.Sample{Contestant: contestants.SlogFile, N: 10, Count: benchharness.LineCount{Lines: 10, Unique: 9, Duplicates: 1}}, "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := problems(&benchharness.Results{Samples: []benchharness.Sample{tt.s}})
			if tt.want == "" {
				assert.Empty(t, p)
				return
			}
			require.Len(t, p, 1)
			assert.Contains(t, p[0], tt.want)
		})
	}
	assert.Equal(t, []string{"x failed"}, problems(&benchharness.Results{Failures: []string{"x failed"}}))
}

func sum(name string, g int, rate, p99 float64, lost int64) benchharness.Summary {
	return benchharness.Summary{Contestant: name, Goroutines: g, N: 100, RecordsPerSec: rate, P99NS: p99,
		Lost: lost, Lines: 100 - lost, Verified: true, Discards: name == contestants.Noop}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		name string
		rows []benchharness.Summary
		want []string
	}{
		{"met", []benchharness.Summary{
			sum(contestants.AsyncbusBlock, 1, 3e6, 500, 0), sum(contestants.Zap, 1, 1e6, 900, 0),
			sum(contestants.Zerolog, 1, 9e6, 100, 50), // lossy: not the best peer
			sum(contestants.Noop, 1, 20e6, 50, 0),     // the floor is no peer
			sum(contestants.AsyncbusBlock, 16, 3e6, 50, 0), sum(contestants.Phuslu, 16, 1e6, 1000, 0),
		}, []string{
			"| 1 | zap-buffered | 1.00 M/s | 900 ns | 3.00 M/s | 3.00× (≥ 2.0×) | — | yes |",
			"| 16 | phuslu-async | 1.00 M/s | 1.0 µs | 3.00 M/s | 3.00× (≥ 2.5×) | 50 ns (< 100 ns) | yes |",
		}},
		{"missed on latency", []benchharness.Summary{
			sum(contestants.AsyncbusBlock, 16, 3e6, 200, 0), sum(contestants.Phuslu, 16, 1e6, 1000, 0),
		}, []string{"| 200 ns (< 100 ns) | no |"}},
		{"missed on speed", []benchharness.Summary{
			sum(contestants.AsyncbusBlock, 1, 1.5e6, 200, 0), sum(contestants.SlogFile, 1, 1e6, 1000, 0),
		}, []string{"1.50× (≥ 2.0×) | — | no |"}},
		{"block lost", []benchharness.Summary{
			sum(contestants.AsyncbusBlock, 1, 5e6, 200, 1), sum(contestants.SlogFile, 1, 1e6, 1000, 0),
		}, []string{"5.00× (≥ 2.0×) | — | no |", "- asyncbus-block, 1 goroutine: 1 lost (target 0)."}},
		{"nothing to compare", []benchharness.Summary{sum(contestants.Zap, 4, 1e6, 1, 0)}, []string{"not measured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &benchharness.Results{Goroutines: []int{1, 16}, Summaries: tt.rows}
			got := targets(res)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

func TestNotesZerolog(t *testing.T) {
	res := &benchharness.Results{Goroutines: []int{4}, Samples: []benchharness.Sample{
		{Contestant: contestants.Zerolog, Goroutines: 4, N: 1000, Lost: 300, HandlerStats: map[string]uint64{"Missed": 310}},
		{Contestant: contestants.Zerolog, Goroutines: 4, N: 1000, Lost: 500, HandlerStats: map[string]uint64{"Missed": 500}},
		{Contestant: contestants.Zap, Goroutines: 4, N: 1000},
	}}
	assert.Contains(t, notes(res), "| 4 | 500 of 1000 | 50.0 % | 500 |", "the worst run")
	assert.NotContains(t, notes(&benchharness.Results{Goroutines: []int{4}}), "diode alert count")
}

func TestLoadAverage(t *testing.T) {
	la := loadAverage()
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		assert.Equal(t, "unknown", la)
		return
	}
	assert.Len(t, strings.Fields(la), 3)
}

// quickRaceExit stops race-enabled child processes from sleeping a second
// at exit (the race runtime's atexit_sleep_ms default), which would
// dominate the isolated runs' wall time.
func quickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
