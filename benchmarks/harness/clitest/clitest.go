// Package clitest holds the test helpers that the benchmark commands built
// on [harness.CLI] (cmd/asyncbus-bench and the benchmarks module's
// cmd/compare) share: checks of the flags every such command has and of
// the files it writes.
package clitest

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

	"github.com/asyncbus/asyncbus/benchmarks/harness"
)

// QuickRaceExit stops race-enabled child processes from sleeping a second
// at exit (the race runtime's atexit_sleep_ms default), which would
// dominate the isolated runs' wall time.
func QuickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// Main is a command's TestMain: it lets the test binary serve as the child
// process of isolated runs (the child is re-executed with run's arguments,
// see [harness.IsChild]) and otherwise runs the tests.
func Main(m *testing.M, run func(args []string, stdout, stderr io.Writer) int) {
	if harness.IsChild() {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// RunOK runs the command (run is its main without the exit) with args,
// requires exit status 0, and returns what it printed on stdout and stderr.
func RunOK(t *testing.T, run func(args []string, stdout, stderr io.Writer) int, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e strings.Builder
	code := run(args, &o, &e)
	require.Equal(t, 0, code, "stderr: %s", e.String())
	return o.String(), e.String()
}

// BadFlag is one invocation that must fail (or, for -help, succeed)
// without printing anything on stdout.
type BadFlag struct {
	Name string   // the subtest's name
	Args []string // the command's arguments
	Code int      // the exit status wanted
	Want string   // a part of what stderr must say
}

// CommonBadFlags are the bad invocations of the flags every
// [harness.CLI] has; a command adds its own (help text, its own flags,
// a -contestants filter that matches none of its contestants).
var CommonBadFlags = []BadFlag{
	{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
	{"bad goroutines", []string{"-goroutines", "1,x"}, 2, `"x" is not a positive integer`},
	{"zero goroutines", []string{"-goroutines", "0"}, 2, "not a positive integer"},
	{"empty goroutines", []string{"-goroutines", ","}, 2, "no goroutine counts"},
	{"goroutines above n", []string{"-n", "2", "-goroutines", "4"}, 2, "4 goroutines for 2 records"},
	{"zero n", []string{"-n", "0"}, 2, "-n must be"},
	{"zero repeat", []string{"-repeat", "0"}, 2, "-repeat must be"},
	{"negative idle", []string{"-idle", "-1s"}, 2, "-idle must not be negative"},
	{"zero sample-every", []string{"-sample-every", "0"}, 2, "-sample-every"},
	{"extra args", []string{"extra"}, 2, "unexpected arguments"},
}

// RunBadFlags runs each case through run (a command's main without the
// exit) and checks its exit status, that stderr says what it should, and
// that stdout stays empty.
func RunBadFlags(t *testing.T, run func(args []string, stdout, stderr io.Writer) int, cases []BadFlag) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, tt.Code, run(tt.Args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tt.Want)
			assert.Empty(t, stdout.String())
		})
	}
}

// CheckOutputs checks the files a run with -out dir wrote: results.md holds
// the report printed on stdout (up to its "Wrote ..." line), chart.svg is
// well-formed XML, and results.json decodes; it returns the decoded
// results for the command's own checks.
func CheckOutputs(t *testing.T, dir, stdout string) harness.Results {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	var res harness.Results
	require.NoError(t, json.Unmarshal(b, &res))

	i := strings.Index(stdout, "\nWrote ")
	require.GreaterOrEqual(t, i, 0, "stdout names the files written")
	mdFile, err := os.ReadFile(filepath.Join(dir, "results.md"))
	require.NoError(t, err)
	assert.Contains(t, string(mdFile), stdout[:i])

	svg, err := os.ReadFile(filepath.Join(dir, "chart.svg"))
	require.NoError(t, err)
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	return res
}
