// Command asyncbus-bench is the README's first command: it runs the
// asyncbus-vs-log/slog benchmark, whose code lives with every other
// benchmark in the nested module benchmarks/ (benchmarks/cmd/asyncbus-bench),
// outside the library's import graph and its go.mod.
//
// Usage, from the repository root:
//
//	go run ./cmd/asyncbus-bench [flags]
//
// It builds the benchmarks module's command into a temporary directory, runs
// it here (so relative paths such as -out mean what they say) with its
// arguments, and exits with its status; -help lists the flags.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

func main() {
	dir, err := benchmarksDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "asyncbus-bench:", err)
		os.Exit(2)
	}
	os.Exit(run(dir, os.Args[1:]))
}

// run builds the command in the benchmarks module dir and runs it with args
// in the current directory, returning its exit status.
func run(dir string, args []string) int {
	tmp, err := os.MkdirTemp("", "asyncbus-bench-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "asyncbus-bench:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "asyncbus-bench")
	build := exec.Command("go", "build", "-o", bin, "./cmd/asyncbus-bench")
	build.Dir = dir
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "asyncbus-bench: building the benchmarks module's command:", err)
		return 2
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "asyncbus-bench:", err)
		return 2
	}
	return 0
}

// benchmarksDir finds the benchmarks module: next to this source file's
// repository root when built from a checkout (go run), else above the
// working directory.
func benchmarksDir() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, d := range starts {
		for {
			cand := filepath.Join(d, "benchmarks")
			if _, err := os.Stat(filepath.Join(cand, "go.mod")); err == nil {
				return cand, nil
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", errors.New("cannot find the benchmarks module (benchmarks/go.mod); run from the asyncbus repository")
}
