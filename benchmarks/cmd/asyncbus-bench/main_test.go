package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/benchmarks/harness"
	"github.com/asyncbus/asyncbus/benchmarks/harness/clitest"
)

// TestMain lets the test binary serve as the child process of isolated
// runs: the child is re-executed with run's arguments.
func TestMain(m *testing.M) { clitest.Main(m, run) }

func TestSmoke(t *testing.T) {
	clitest.QuickRaceExit(t)
	out := t.TempDir()
	md, stderr := clitest.RunOK(t, run, "-n", "600", "-goroutines", "1,3", "-repeat", "2", "-idle", "10ms", "-out", out)

	assert.Contains(t, md, "### 1 goroutine\n")
	assert.Contains(t, md, "### 3 goroutines\n")
	for _, name := range contestantNames() {
		assert.Equal(t, 2, strings.Count(md, "\n| "+name+" |"), name)
	}
	assert.Contains(t, md, "vs slog-file")
	cs, err := contestants("json")
	require.NoError(t, err)
	last := harness.RepOrder(cs, 2)[len(cs)-1].Name
	assert.Contains(t, stderr, "\r[20/20] rep 2/2  3 goroutines  "+last, "progress line")
	assert.NotContains(t, stderr, "FAIL")

	res := clitest.CheckOutputs(t, out, md)
	require.Len(t, res.Samples, 20)
	require.Empty(t, res.Failures)
	for _, s := range res.Samples {
		assert.True(t, s.Isolated)
		assert.True(t, s.Count.Verified(), s.Contestant)
		assert.Zero(t, s.Unaccounted, s.Contestant)
		if s.Contestant != nameDrop {
			assert.Zero(t, s.Lost, s.Contestant)
		}
		if s.Contestant == nameBlock {
			assert.Equal(t, uint64(600), s.HandlerStats["Written"])
		}
	}
}

// TestFormats runs asyncbus in every format in-process and checks that the
// file reads back complete, i.e. the line counter understands each format.
func TestFormats(t *testing.T) {
	for _, format := range []string{"json", "text", "logfmt", "CONSOLE"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr := clitest.RunOK(t, run, "-format", format, "-n", "300", "-goroutines", "2", "-repeat", "1", "-idle", "0",
				"-isolate=false", "-quiet", "-out", "", "-contestants", "block, SLOG-FILE")
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "| asyncbus-block |")
			assert.Contains(t, stdout, "| slog-file |")
			assert.NotContains(t, stdout, "| noop |")
			assert.NotContains(t, stdout, " * |", "every line verified")
		})
	}
}

func TestBadFlags(t *testing.T) {
	clitest.RunBadFlags(t, run, append([]clitest.BadFlag{
		{Name: "help", Args: []string{"-help"}, Code: 0, Want: "under a minute"},
		{Name: "bad format", Args: []string{"-format", "xml"}, Code: 2, Want: "-format must be"},
		{Name: "no match", Args: []string{"-contestants", "zap"}, Code: 2, Want: "matches none"},
	}, clitest.CommonBadFlags...))
}

func TestProblems(t *testing.T) {
	ok := harness.LineCount{Lines: 10, Unique: 10}
	tests := []struct {
		name string
		s    harness.Sample
		want string
	}{
		{"clean", harness.Sample{Contestant: nameBlock, N: 10, Count: ok}, ""},
		{"block lost", harness.Sample{Contestant: nameBlock, N: 10, Lost: 1, Unaccounted: 1, Count: ok}, "lost 1 of 10"},
		{"drop reported", harness.Sample{Contestant: nameDrop, N: 10, Lost: 3, Count: ok}, ""},
		{"drop unreported", harness.Sample{Contestant: nameDrop, N: 10, Lost: 3, Unaccounted: 2, Count: ok}, "2 records neither"},
		{"noop", harness.Sample{Contestant: nameNoop, Discards: true, N: 10, Lost: 0}, ""},
		{"duplicates", harness.Sample{Contestant: nameFile, N: 10, Count: harness.LineCount{Lines: 10, Unique: 9, Duplicates: 1}}, "does not verify"},
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

// problems is what the command reports as FAIL lines.
func problems(res *harness.Results) []string {
	cli := newCLI()
	return harness.Problems(res, cli.MayLose, cli.MustAccount)
}
