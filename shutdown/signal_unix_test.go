//go:build unix

package shutdown

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signalProgram is a busy program stopped by SIGTERM: two handlers, on
// standard output and on a file, joined by slog.NewMultiHandler and set as
// the default (so asyncbus.CloseDefault cannot reach them), 8 goroutines
// logging 2,500 lines each, then a last line; it says "logged" on
// standard error and waits to be killed, never calling Close. With
// "on-signal" it calls OnSignal first, with "on-sigint" OnSignal for
// os.Interrupt; with "none" it does not.
const signalProgram = `package main

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/shutdown"
)

func main() {
	mode, path := os.Args[1], os.Args[2]
	switch mode {
	case "on-signal":
		shutdown.OnSignal(20 * time.Second)
	case "on-sigint":
		shutdown.OnSignal(20*time.Second, os.Interrupt)
	}
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	console := asyncbus.NewHandler(os.Stdout, nil)
	file := asyncbus.NewHandler(f, nil)
	slog.SetDefault(slog.New(slog.NewMultiHandler(console, file)))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2500 {
				slog.Info("busy", "g", g, "i", i)
			}
		})
	}
	wg.Wait()
	slog.Info("done")
	os.Stderr.WriteString("logged\n")
	time.Sleep(time.Minute) // killed before
}
`

// TestOnSignalKeepsEveryLine: SIGTERM sent the moment a busy program has
// logged its last line (most of its 20,001 lines still queued): with
// OnSignal, both outputs have every line, each goroutine's in order, in
// 20 runs of 20, and the process ends killed by SIGTERM, as it would
// without OnSignal; the same with OnSignal given os.Interrupt and SIGINT
// sent. Without OnSignal (the control) the process ends the same way;
// how many lines it kept is logged (go test -v).
func TestOnSignalKeepsEveryLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program 28 times")
	}
	bin := buildProgram(t, "sigprog", signalProgram)
	const goroutines, each = 8, 2500
	t.Run("on-signal", func(t *testing.T) {
		for run := range 20 {
			stdout, file := runKilled(t, bin, "on-signal", syscall.SIGTERM)
			for name, out := range map[string]string{"stdout": stdout, "file": file} {
				kept := checkLines(t, out, goroutines)
				require.Equal(t, goroutines*each+1, kept, "run %d of 20, %s: every line is kept", run+1, name)
				require.True(t, strings.HasSuffix(out, "\"msg\":\"done\"}\n"), "run %d, %s: the last line is last", run+1, name)
			}
		}
	})
	t.Run("named-signal", func(t *testing.T) {
		for run := range 3 {
			stdout, file := runKilled(t, bin, "on-sigint", syscall.SIGINT)
			for name, out := range map[string]string{"stdout": stdout, "file": file} {
				require.Equal(t, goroutines*each+1, checkLines(t, out, goroutines), "run %d of 3, %s: every line is kept", run+1, name)
			}
		}
	})
	t.Run("control", func(t *testing.T) {
		for run := range 5 {
			stdout, file := runKilled(t, bin, "none", syscall.SIGTERM)
			t.Logf("run %d without OnSignal: kept %d (stdout) and %d (file) of %d lines", run+1,
				checkLines(t, stdout, goroutines), checkLines(t, file, goroutines), goroutines*each+1)
		}
	})
}

// runKilled runs bin in mode, sends it sig once it says it logged
// everything, checks that it ended killed by sig, and returns its
// standard output and its file.
func runKilled(t *testing.T, bin, mode string, sig syscall.Signal) (stdout, file string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.log")
	var out bytes.Buffer
	c := exec.Command(bin, mode, path)
	c.Stdout = &out
	stderr, err := c.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan(), "the program says when it logged everything")
	require.Equal(t, "logged", lines.Text())
	require.NoError(t, c.Process.Signal(sig))
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	err = c.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "killed, not exited: %v; stderr: %s", err, rest.String())
	ws := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled(), "ended by a signal; stderr: %s", rest.String())
	require.Equal(t, sig, ws.Signal())
	assert.Empty(t, rest.String(), "nothing reported")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	return out.String(), string(got)
}

// checkLines checks that every line of out is whole and each goroutine's
// lines are its first ones, in order, each once, and returns how many
// lines out has.
func checkLines(t *testing.T, out string, goroutines int) int {
	t.Helper()
	lines := strings.SplitAfter(out, "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "\n") {
		lines = lines[:len(lines)-1] // "" or a line the kill cut
	}
	next := make([]int, goroutines) // the next i expected from each goroutine
	for _, line := range lines {
		if strings.Contains(line, `"msg":"done"`) {
			continue
		}
		var g, i int
		at := strings.Index(line, `"g":`)
		require.GreaterOrEqual(t, at, 0, "a whole line: %q", line)
		_, err := fmt.Sscanf(line[at:], `"g":%d,"i":%d}`, &g, &i)
		require.NoError(t, err, "a whole line: %q", line)
		require.Equal(t, next[g], i, "goroutine %d's lines in order, each once", g)
		next[g]++
	}
	return len(lines)
}

// buildProgram builds src, a main package that imports this module, into a
// binary in a temporary directory and returns its path.
func buildProgram(t *testing.T, name, src string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	for file, body := range map[string]string{
		"go.mod":  "module " + name + "\n\ngo 1.26.0\n\nrequire github.com/asyncbus/asyncbus v0.0.0\n\nreplace github.com/asyncbus/asyncbus => " + root + "\n",
		"go.sum":  string(sum),
		"main.go": src,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644))
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command(goCmd, "build", "-mod=mod", "-o", bin, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}
