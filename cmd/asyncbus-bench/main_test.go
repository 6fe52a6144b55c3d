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

func TestSmoke(t *testing.T) {
	quickRaceExit(t)
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"-n", "600", "-goroutines", "1,3", "-repeat", "2", "-idle", "10ms", "-out", out}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())

	md := stdout.String()
	assert.Contains(t, md, "### 1 goroutine\n")
	assert.Contains(t, md, "### 3 goroutines\n")
	for _, name := range contestantNames() {
		assert.Equal(t, 2, strings.Count(md, "\n| "+name+" |"), name)
	}
	assert.Contains(t, md, "vs slog-file")
	assert.Contains(t, stderr.String(), "\r[20/20] rep 2/2  3 goroutines  noop", "progress line")
	assert.NotContains(t, stderr.String(), "FAIL")

	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	require.NoError(t, err)
	var res benchharness.Results
	require.NoError(t, json.Unmarshal(b, &res))
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

// TestFormats runs asyncbus in every format in-process and checks that the
// file reads back complete, i.e. the line counter understands each format.
func TestFormats(t *testing.T) {
	for _, format := range []string{"json", "text", "logfmt", "CONSOLE"} {
		t.Run(format, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run([]string{"-format", format, "-n", "300", "-goroutines", "2", "-repeat", "1", "-idle", "0",
				"-isolate=false", "-quiet", "-out", "", "-contestants", "block, SLOG-FILE"}, &stdout, &stderr)
			require.Equal(t, 0, code, "stderr: %s", stderr.String())
			assert.Empty(t, stderr.String())
			assert.Contains(t, stdout.String(), "| asyncbus-block |")
			assert.Contains(t, stdout.String(), "| slog-file |")
			assert.NotContains(t, stdout.String(), "| noop |")
			assert.NotContains(t, stdout.String(), " * |", "every line verified")
		})
	}
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"-help"}, 0, "under a minute"},
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"bad format", []string{"-format", "xml"}, 2, "-format must be"},
		{"bad goroutines", []string{"-goroutines", "1,x"}, 2, `"x" is not a positive integer`},
		{"zero goroutines", []string{"-goroutines", "0"}, 2, "not a positive integer"},
		{"empty goroutines", []string{"-goroutines", ","}, 2, "no goroutine counts"},
		{"goroutines above n", []string{"-n", "2", "-goroutines", "4"}, 2, "4 goroutines for 2 records"},
		{"zero n", []string{"-n", "0"}, 2, "-n must be"},
		{"zero repeat", []string{"-repeat", "0"}, 2, "-repeat must be"},
		{"negative idle", []string{"-idle", "-1s"}, 2, "-idle must not be negative"},
		{"zero sample-every", []string{"-sample-every", "0"}, 2, "-sample-every"},
		{"no match", []string{"-contestants", "zap"}, 2, "matches none"},
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
		{"clean", benchharness.Sample{Contestant: nameBlock, N: 10, Count: ok}, ""},
		{"block lost", benchharness.Sample{Contestant: nameBlock, N: 10, Lost: 1, Unaccounted: 1, Count: ok}, "lost 1 of 10"},
		{"drop reported", benchharness.Sample{Contestant: nameDrop, N: 10, Lost: 3, Count: ok}, ""},
		{"drop unreported", benchharness.Sample{Contestant: nameDrop, N: 10, Lost: 3, Unaccounted: 2, Count: ok}, "2 records neither"},
		{"noop", benchharness.Sample{Contestant: nameNoop, Discards: true, N: 10, Lost: 0}, ""},
		{"duplicates", benchharness.Sample{Contestant: nameFile, N: 10, Count: benchharness.LineCount{Lines: 10, Unique: 9, Duplicates: 1}}, "does not verify"},
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

// quickRaceExit stops race-enabled child processes from sleeping a second
// at exit (the race runtime's atexit_sleep_ms default), which would
// dominate the isolated runs' wall time.
func quickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
