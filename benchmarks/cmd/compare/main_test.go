package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/benchmarks/contestants"
	"github.com/asyncbus/asyncbus/benchmarks/harness"
	"github.com/asyncbus/asyncbus/benchmarks/harness/clitest"
)

// TestMain lets the test binary serve as the child process of isolated
// runs: the child is re-executed with run's arguments.
func TestMain(m *testing.M) { clitest.Main(m, run) }

// TestSmokeIsolated runs every contestant once per goroutine count, each in
// its own child process, and checks the three output files.
func TestSmokeIsolated(t *testing.T) {
	clitest.QuickRaceExit(t)
	out := t.TempDir()
	md, stderr := clitest.RunOK(t, run, "-n", "500", "-goroutines", "1,3", "-repeat", "1", "-idle", "5ms", "-out", out)

	assert.Contains(t, md, "Measured ")
	assert.Contains(t, md, "Load average (1/5/15 min) before the run: ")
	assert.Contains(t, md, "### 3 goroutines\n")
	for _, name := range contestants.Names() {
		assert.Equal(t, 2, strings.Count(md, "\n| "+name+" |"), name)
	}
	assert.Contains(t, md, "### The targets")
	assert.Contains(t, md, "The handler's share of a call")
	assert.Contains(t, md, "- asyncbus-durable, 1 goroutine: ")
	assert.Contains(t, md, "| 1 | ", "target row at 1 goroutine")
	assert.Contains(t, md, "diode alert count")
	assert.NotContains(t, stderr, "FAIL")

	res := clitest.CheckOutputs(t, out, md)
	require.Len(t, res.Samples, 2*len(contestants.Names()))
	require.Empty(t, res.Failures)
	for _, s := range res.Samples {
		assert.True(t, s.Isolated, s.Contestant)
		assert.True(t, s.Count.Verified(), s.Contestant)
		if !contestants.MayLose(s.Contestant) {
			assert.Zero(t, s.Lost, s.Contestant)
		}
	}
}

func TestFilterInProcess(t *testing.T) {
	stdout, stderr := clitest.RunOK(t, run, "-n", "300", "-goroutines", "2", "-repeat", "1", "-idle", "0",
		"-isolate=false", "-quiet", "-out", "", "-contestants", "ZAP, phuslu")
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "| zap-buffered |")
	assert.Contains(t, stdout, "| phuslu-async |")
	assert.NotContains(t, stdout, "| noop |")
	assert.NotContains(t, stdout, "Wrote ")
	assert.Contains(t, stdout, "not measured", "no asyncbus, so no target row")
}

func TestBadFlags(t *testing.T) {
	clitest.RunBadFlags(t, run, append([]clitest.BadFlag{
		{Name: "help", Args: []string{"-help"}, Code: 0, Want: "seeds' baselines"},
		{Name: "no match", Args: []string{"-contestants", "log4j"}, Code: 2, Want: "matches none"},
	}, clitest.CommonBadFlags...))
}

func TestProblems(t *testing.T) {
	ok := harness.LineCount{Lines: 10, Unique: 10}
	tests := []struct {
		name string
		s    harness.Sample
		want string
	}{
		{"clean", harness.Sample{Contestant: contestants.AsyncbusBlock, N: 10, Count: ok}, ""},
		{"block lost", harness.Sample{Contestant: contestants.AsyncbusBlock, N: 10, Lost: 1, Unaccounted: 1, Count: ok}, "lost 1 of 10"},
		{"zap lost", harness.Sample{Contestant: contestants.Zap, N: 10, Lost: 2, Unaccounted: 2, Count: ok}, "lost 2 of 10"},
		{"drop reported", harness.Sample{Contestant: contestants.AsyncbusDrop, N: 10, Lost: 3, Count: ok}, ""},
		{"drop unreported", harness.Sample{Contestant: contestants.AsyncbusDrop, N: 10, Lost: 3, Unaccounted: 2, Count: ok}, "2 records neither"},
		{"diode loses by design", harness.Sample{Contestant: contestants.Zerolog, N: 10, Lost: 8, Unaccounted: 8, Count: ok}, ""},
		{"diode torn line", harness.Sample{Contestant: contestants.Zerolog, N: 10, Lost: 8, Unaccounted: 8,
			Count: harness.LineCount{Lines: 2, Unique: 1, Unparsed: 1}}, "does not verify"},
		{"noop", harness.Sample{Contestant: contestants.Noop, Discards: true, N: 10}, ""},
		{"duplicates", harness.Sample{Contestant: contestants.SlogFile, N: 10, Count: harness.LineCount{Lines: 10, Unique: 9, Duplicates: 1}}, "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := problems(&harness.Results{Samples: []harness.Sample{tt.s}})
			if tt.want == "" {
				assert.Empty(t, p)
				return
			}
			require.Len(t, p, 1)
			assert.Contains(t, p[0], tt.want)
		})
	}
	assert.Equal(t, []string{"x failed"}, problems(&harness.Results{Failures: []string{"x failed"}}))
}

func sum(name string, g int, rate, p99 float64, lost int64) harness.Summary {
	return harness.Summary{Contestant: name, Goroutines: g, N: 100, RecordsPerSec: rate, P99NS: p99,
		Lost: lost, Lines: 100 - lost, Verified: true, Discards: name == contestants.Noop}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		name string
		rows []harness.Summary
		want []string
	}{
		{"met", []harness.Summary{
			sum(contestants.AsyncbusBlock, 1, 3e6, 500, 0), sum(contestants.Phuslu, 1, 1e6, 900, 0),
			sum(contestants.Zerolog, 16, 9e6, 100, 50), // lossy: not the best peer
			sum(contestants.Noop, 16, 20e6, 50, 0),     // the floor is no peer
			sum(contestants.AsyncbusBlock, 16, 3e6, 50, 0), sum(contestants.Phuslu, 16, 1e6, 1000, 0),
		}, []string{
			"| 1 | phuslu-async | 1.00 M/s | 900 ns | 3.00 M/s | 3.00× (≥ 2.0×) | — | yes |",
			"| 16 | phuslu-async | 1.00 M/s | 1.0 µs | 3.00 M/s | 3.00× (≥ 2.5×) | 50 ns (< 100 ns) | yes |",
		}},
		{"zap at 4", []harness.Summary{
			sum(contestants.AsyncbusBlock, 4, 3e6, 500, 0), sum(contestants.Zap, 4, 2e6, 900, 0),
		}, []string{"| 4 | zap-buffered | 2.00 M/s | 900 ns | 3.00 M/s | 1.50× (≥ 2.0×) | — | no |"}},
		{"missed on latency", []harness.Summary{
			sum(contestants.AsyncbusBlock, 16, 3e6, 200, 0), sum(contestants.Phuslu, 16, 1e6, 1000, 0),
		}, []string{"| 200 ns (< 100 ns) | no |"}},
		{"missed on speed", []harness.Summary{
			sum(contestants.AsyncbusBlock, 1, 1.5e6, 200, 0), sum(contestants.SlogFile, 1, 1e6, 1000, 0),
		}, []string{"| 1 | slog-file | 1.00 M/s | 1.0 µs | 1.50 M/s | 1.50× (≥ 3.0×) | — | no |"}},
		{"block lost", []harness.Summary{
			sum(contestants.AsyncbusBlock, 1, 5e6, 200, 1), sum(contestants.SlogFile, 1, 1e6, 1000, 0),
		}, []string{"5.00× (≥ 3.0×) | — | no |", "- asyncbus-block, 1 goroutine: 1 lost (target 0)."}},
		{"nothing to compare", []harness.Summary{sum(contestants.Zap, 4, 1e6, 1, 0)}, []string{"not measured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &harness.Results{Goroutines: []int{1, 4, 16}, Summaries: tt.rows}
			got := targets(res)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

// TestShares checks the share column: a call's ns minus the no-op floor's
// at the same goroutine count, and the 150 ns goal at 1 goroutine.
func TestShares(t *testing.T) {
	rows := []harness.Summary{
		{Contestant: contestants.AsyncbusBlock, Goroutines: 1, NsPerCall: 520},
		{Contestant: contestants.Phuslu, Goroutines: 1, NsPerCall: 1100},
		{Contestant: contestants.Noop, Goroutines: 1, NsPerCall: 400, Discards: true},
	}
	got := shares(&harness.Results{Goroutines: []int{1}, Summaries: rows})
	assert.Contains(t, got, "| 1 | asyncbus-block | 520 ns | 400 ns | 120 ns (target ≤ 150 ns: yes) |")
	assert.Contains(t, got, "| 1 | phuslu-async | 1100 ns | 400 ns | 700 ns |")
	rows[0].NsPerCall = 600
	assert.Contains(t, shares(&harness.Results{Goroutines: []int{1}, Summaries: rows}), "200 ns (target ≤ 150 ns: no)")
	assert.Empty(t, shares(&harness.Results{Goroutines: []int{1}, Summaries: rows[:2]}), "no floor, no shares")
}

func TestNotesZerolog(t *testing.T) {
	res := &harness.Results{Goroutines: []int{4}, Samples: []harness.Sample{
		{Contestant: contestants.Zerolog, Goroutines: 4, N: 1000, Lost: 300, HandlerStats: map[string]uint64{"Missed": 310}},
		{Contestant: contestants.Zerolog, Goroutines: 4, N: 1000, Lost: 500, HandlerStats: map[string]uint64{"Missed": 500}},
		{Contestant: contestants.Zap, Goroutines: 4, N: 1000},
	}}
	assert.Contains(t, notes(res), "| 4 | 500 of 1000 | 50.0 % | 500 |", "the worst run")
	assert.NotContains(t, notes(&harness.Results{Goroutines: []int{4}}), "diode alert count")
}

func TestLoadAverage(t *testing.T) {
	la := loadAverage()
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		assert.Equal(t, "unknown", la)
		return
	}
	assert.Len(t, strings.Fields(la), 3)
}

// problems is what the command reports as FAIL lines.
func problems(res *harness.Results) []string {
	cli := newCLI()
	return harness.Problems(res, cli.MayLose, cli.MustAccount)
}

// TestReadmeTable runs a small comparison with -readme and checks that the
// table between the markers, and nothing else, was replaced by this run's.
func TestReadmeTable(t *testing.T) {
	readme := t.TempDir() + "/README.md"
	before := "# title\n\nprose before\n\n" + tableBegin + "\n| old | table |\n" + tableEnd + "\n\nprose after\n"
	require.NoError(t, os.WriteFile(readme, []byte(before), 0o644))
	_, stderr := clitest.RunOK(t, run, "-n", "300", "-goroutines", "1,4", "-repeat", "1", "-idle", "0",
		"-isolate=false", "-quiet", "-out", "", "-contestants", "asyncbus-block,phuslu,zerolog,noop", "-readme", readme)
	assert.Empty(t, stderr)
	got, err := os.ReadFile(readme)
	require.NoError(t, err)
	doc := string(got)
	assert.True(t, strings.HasPrefix(doc, "# title\n\nprose before\n\n"+tableBegin+"\n| records/s (lines lost) | 1 goroutine | 4 goroutines | P99 call latency, 4 goroutines |\n"), doc)
	assert.True(t, strings.HasSuffix(doc, "\n"+tableEnd+"\n\nprose after\n"), doc)
	assert.NotContains(t, doc, "| old | table |")
	assert.Regexp(t, `\n\| \*\*asyncbus, Block\*\* \(default\) \| \*\*[0-9.]+ [kM] \(0\)\*\* \| \*\*[0-9.]+ [kM] \(0\)\*\* \| \*\*[0-9.]+ [nµm]?s\*\* \|\n`, doc)
	assert.Regexp(t, "\n\\| phuslu/log `AsyncWriter` \\| [0-9.]+ [kM] \\(0\\) \\|", doc)
	assert.Contains(t, doc, "| zerolog `diode` |")
	assert.Regexp(t, `\n\| no-op handler \(slog's own front end: the floor\) \| [0-9.]+ [kM] \|`, doc)
	assert.NotContains(t, doc, "zap `BufferedWriteSyncer`", "contestants not run have no row")
}

// TestReadmeWithoutMarkers: a README without the markers is an error and is
// left as it was.
func TestReadmeWithoutMarkers(t *testing.T) {
	_, err := replaceTable("# no markers\n", "| t |\n")
	require.Error(t, err)
	_, err = replaceTable(tableEnd+"\n"+tableBegin+"\n", "| t |\n")
	require.Error(t, err, "markers in the wrong order")
}

// TestReadmeTableLostOrDropped: a line missing without a drop marker is
// lost (in bold); one counted by asyncbus's drop markers is dropped and
// reported, not lost.
func TestReadmeTableLostOrDropped(t *testing.T) {
	res := &harness.Results{Goroutines: []int{4}, Summaries: []harness.Summary{
		{Contestant: contestants.AsyncbusBlock, Goroutines: 4, N: 1000, RecordsPerSec: 1e6, P99NS: 4000},
		{Contestant: contestants.AsyncbusDrop, Goroutines: 4, N: 1000, RecordsPerSec: 1.1e6, P99NS: 4000, Lost: 78, DroppedReported: 78},
		{Contestant: contestants.Zerolog, Goroutines: 4, N: 1000, RecordsPerSec: 6e5, P99NS: 8000, Lost: 867, Unaccounted: 867},
	}}
	table := readmeTable(res)
	assert.Contains(t, table, "| **asyncbus, Block** (default) | **1.00 M (0)** |")
	assert.Contains(t, table, "| asyncbus, Drop | 1.10 M (7.8 % lost, every one reported by a drop marker) |")
	assert.Contains(t, table, "| zerolog `diode` | 600 k (**86.7 % lost, unreported**) |")
}

// TestShapeStructs: -shape structs runs the ~1 KB record through every
// contestant asked for, says so above the tables, and every file verifies.
func TestShapeStructs(t *testing.T) {
	stdout, stderr := clitest.RunOK(t, run, "-n", "300", "-goroutines", "1,4", "-repeat", "1", "-idle", "0",
		"-isolate=false", "-quiet", "-out", "", "-shape", "structs", "-contestants", "asyncbus-block,slog-file,phuslu")
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "Record: the ~1 KB structs record (-shape structs)")
	assert.Contains(t, stdout, "| records/s (lines lost) | 1 goroutine | 4 goroutines |", "the README's table comes first")
	assert.Contains(t, stdout, "| phuslu-async |")
}

// TestDefaultsAreAQuickLook: with no flags the command runs every
// contestant at 1, 4 and 16 goroutines on 50,000 records, 3 repeats, and
// writes its files outside the module (the committed results stay).
func TestDefaultsAreAQuickLook(t *testing.T) {
	cli := newCLI()
	assert.Equal(t, 50_000, cli.DefaultN)
	assert.Equal(t, 3, cli.DefaultRepeat)
	assert.True(t, strings.HasPrefix(cli.DefaultOut, os.TempDir()), cli.DefaultOut)
}
