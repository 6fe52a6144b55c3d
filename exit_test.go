package asyncbus_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exitProgram is a real program on the default handler that never calls
// Close or Flush: it logs and either returns from main or logs an error and
// calls os.Exit(1) (with default options, Overflow: Drop, or a
// BlockTimeout), writing to os.Stdout (a pipe read by the test), an
// *os.File or a filesink.File.
const exitProgram = `package main

import (
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/filesink"
)

func main() {
	mode, output, path := os.Args[1], os.Args[2], os.Args[3]
	opts := &asyncbus.Options{}
	switch mode {
	case "exit-drop":
		opts.Ring.Overflow, mode = asyncbus.Drop, "exit"
	case "return-drop", "return-drop-concurrent":
		// A quiet program in Drop mode keeps its lines too: the quiet
		// wait is the same in every mode.
		opts.Ring.Overflow, mode = asyncbus.Drop, strings.Replace(mode, "-drop", "", 1)
	case "exit-timeout":
		opts.Ring.BlockTimeout, mode = time.Second, "exit"
	}
	var h *asyncbus.Handler
	switch output {
	case "stdout":
		h = asyncbus.NewHandler(os.Stdout, opts)
	case "file":
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			panic(err)
		}
		h = asyncbus.NewHandler(f, opts)
	case "filesink":
		f, err := filesink.Open(path, filesink.Options{})
		if err != nil {
			panic(err)
		}
		h = asyncbus.NewHandler(f, opts)
	}
	slog.SetDefault(slog.New(h))
	switch mode {
	case "return":
		for i := range 4 {
			slog.Info("line", "i", i)
		}
	case "exit":
		for i := range 3 {
			slog.Info("line", "i", i)
		}
		slog.Error("fatal problem", "i", 3)
		os.Exit(1)
	case "return-concurrent", "exit-concurrent":
		// A shutdown as controller-runtime's manager does it: several
		// goroutines log a few lines at once, main logs a last line and
		// returns (or exits) at once.
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 5 {
					slog.Info("stopping", "g", g, "i", i)
				}
			})
		}
		wg.Wait()
		slog.Info("done")
		if mode == "exit-concurrent" {
			os.Exit(0)
		}
	case "return-busy":
		// A busy logger: 8 goroutines log 2,500 lines each, main logs a
		// last line and returns.
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
	case "after-close":
		// A shutdown-order mistake: a line logged after Close, then main
		// returns at once.
		slog.Info("before Close")
		if err := asyncbus.CloseDefault(); err != nil {
			panic(err)
		}
		slog.Info("after Close")
	}
}
`

// TestNothingLostAtExit runs the program 20 times per exit path and
// output: every line is there each time, with no Close in main, in Block
// and Drop mode, also when several goroutines log at once just before main
// returns or exits, and an Error before os.Exit(1) keeps its line and
// those before it in every overflow mode.
func TestNothingLostAtExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program 480 times")
	}
	bin := buildProgram(t, "exitprog", exitProgram)

	const runs = 20
	for _, mode := range []string{"return", "return-drop", "exit", "exit-drop", "exit-timeout", "return-concurrent", "return-drop-concurrent", "exit-concurrent"} {
		for _, output := range []string{"stdout", "file", "filesink"} {
			t.Run(mode+"/"+output, func(t *testing.T) {
				for run := range runs {
					path := filepath.Join(t.TempDir(), "out.log")
					var stdout, stderr bytes.Buffer
					c := exec.Command(bin, mode, output, path)
					c.Stdout, c.Stderr = &stdout, &stderr
					err := c.Run()
					fatal := strings.HasPrefix(mode, "exit") && !strings.HasSuffix(mode, "-concurrent")
					if fatal {
						var ee *exec.ExitError
						require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
						require.Equal(t, 1, ee.ExitCode())
					} else {
						require.NoError(t, err, "stderr: %s", stderr.String())
					}
					got := stdout.Bytes()
					if output != "stdout" {
						got, err = os.ReadFile(path)
						require.NoError(t, err)
					}
					lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
					if strings.HasSuffix(mode, "-concurrent") {
						checkConcurrentExit(t, lines, run, runs)
						continue
					}
					require.Len(t, lines, 4, "run %d of %d: every line is kept:\n%s", run+1, runs, got)
					for i, line := range lines {
						require.Contains(t, line, `"i":`+strconv.Itoa(i), "run %d, line %d in order", run+1, i)
					}
					if fatal {
						require.Contains(t, lines[3], `"level":"ERROR","msg":"fatal problem"`)
					}
				}
			})
		}
	}
}

// checkConcurrentExit checks the output of a "-concurrent" run: 8
// goroutines' 5 lines each, every one exactly once and each goroutine's in
// order, then the final line.
func checkConcurrentExit(t *testing.T, lines []string, run, runs int) {
	t.Helper()
	require.Len(t, lines, 41, "run %d of %d: every line is kept:\n%s", run+1, runs, strings.Join(lines, "\n"))
	require.Contains(t, lines[40], `"msg":"done"`, "run %d: the last line is last", run+1)
	next := make([]int, 8) // the next i expected from each goroutine
	for _, line := range lines[:40] {
		var g, i int
		_, err := fmt.Sscanf(line[strings.Index(line, `"g":`):], `"g":%d,"i":%d}`, &g, &i)
		require.NoError(t, err, "run %d: %s", run+1, line)
		require.Equal(t, next[g], i, "run %d: goroutine %d's lines in order", run+1, g)
		next[g]++
	}
}

// buildProgram builds src, a main package that imports this module, into a
// binary in a temporary directory and returns its path.
func buildProgram(t *testing.T, name, src string) string {
	t.Helper()
	goCmd, root := goTool(t), repoRoot(t)
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

// TestExitAfterCloseAndWithoutIt runs the program's two other shutdowns.
//
// "after-close": the report of a record logged after Close was
// delivered on a goroutine of its own and lost when main returned right
// after (0 of 5 runs had it); it is now on stderr every time.
//
// "return-busy": without Close, a busy logger loses the lines
// still queued when main returns, and how many varies widely between runs.
// What holds each time: every line kept is whole, and each goroutine's kept
// lines are its first ones, in order (what is lost is the end of the
// queue). The figures are logged (go test -v), for the README's.
func TestExitAfterCloseAndWithoutIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program 10 times")
	}
	bin := buildProgram(t, "exitprog", exitProgram)
	run := func(t *testing.T, mode string) (stdout, stderr string) {
		var out, errOut bytes.Buffer
		c := exec.Command(bin, mode, "stdout", "")
		c.Stdout, c.Stderr = &out, &errOut
		require.NoError(t, c.Run(), "stderr: %s", errOut.String())
		return out.String(), errOut.String()
	}
	const runs = 5
	t.Run("after-close", func(t *testing.T) {
		for i := range runs {
			stdout, stderr := run(t, "after-close")
			require.Equal(t, `asyncbus: handler closed: a record logged after Close was dropped (level INFO, msg "after Close"); it and any later ones are counted in Stats.DroppedClosed, and only this first one is reported`+"\n",
				stderr, "run %d of %d", i+1, runs)
			require.Contains(t, stdout, `"msg":"before Close"`)
			require.NotContains(t, stdout, `"msg":"after Close"`)
		}
	})
	t.Run("return-busy", func(t *testing.T) {
		const goroutines, each = 8, 2500
		for i := range runs {
			stdout, stderr := run(t, "return-busy")
			require.Empty(t, stderr)
			lines := strings.SplitAfter(stdout, "\n")
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, "\n") {
				lines = lines[:len(lines)-1] // "" or a line the exit cut
			}
			next := make([]int, goroutines) // the next i expected from each goroutine
			done := 0
			for _, line := range lines {
				if strings.Contains(line, `"msg":"done"`) {
					done++
					continue
				}
				var g, n int
				_, err := fmt.Sscanf(line[strings.Index(line, `"g":`):], `"g":%d,"i":%d}`, &g, &n)
				require.NoError(t, err, "run %d: a whole line: %q", i+1, line)
				require.Equal(t, next[g], n, "run %d: goroutine %d's first lines, in order", i+1, g)
				next[g]++
			}
			empty := 0
			for _, n := range next {
				if n == 0 {
					empty++
				}
			}
			t.Logf("run %d: kept %d of %d lines; per goroutine %v (%d with none)", i+1, len(lines), goroutines*each+1, next, empty)
		}
	})
}
