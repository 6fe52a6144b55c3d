package integration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/asyncbus/asyncbus/logrbridge"
	ourzap "github.com/asyncbus/asyncbus/logrbridge/zap"
)

const (
	crZapImport  = "sigs.k8s.io/controller-runtime/pkg/log/zap"
	ourZapImport = "github.com/asyncbus/asyncbus/logrbridge/zap"
)

// scaffoldMain is a kubebuilder-style main: the logger set up exactly as
// the scaffold does, then the program logs the way operators do (names,
// values, V levels, errors, nested values, Kubernetes objects, text that
// needs escaping).
// %s is the zap package's import path: the only difference between the
// two builds. main defers logrbridge.Flush(ctrl.Log) right after
// SetLogger, the line the drop-in's package doc prints as required (with
// controller-runtime's zap it does nothing). With -exit=fail it logs the
// scaffold's "unable to start manager" error and calls os.Exit(1), which
// runs no deferred call; -exit=exit0 logs a few lines and calls
// os.Exit(0); -exit=shutdown logs as a busy manager stopping does and
// returns; -exit=values logs every kind of value and returns.
const scaffoldMain = `package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"%s"

	"github.com/asyncbus/asyncbus/logrbridge"
)

type spec struct {
	Replicas int               ` + "`json:\"replicas\"`" + `
	Labels   map[string]string ` + "`json:\"labels\"`" + `
	Ports    []int             ` + "`json:\"ports\"`" + `
}

type phase string

// verboseErr formats itself with more detail under %%+v, as pkg/errors does.
type verboseErr struct{ msg string }

func (e verboseErr) Error() string { return e.msg }
func (e verboseErr) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprint(s, e.msg+"\nwith detail")
		return
	}
	fmt.Fprint(s, e.msg)
}

func (p phase) String() string { return "phase:" + string(p) }

func main() {
	var exit string
	flag.StringVar(&exit, "exit", "return", "return, values, fail, exit0 or shutdown")
	opts := zap.Options{
		Development: true,
	}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	defer logrbridge.Flush(ctrl.Log) // write every line before main returns
	setupLog := ctrl.Log.WithName("setup")

	switch exit {
	case "shutdown":
		// A busy manager shutting down: its workers log at once, then
		// the manager logs that it is done and main returns.
		log := ctrl.Log.WithName("manager")
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 2500 {
					log.Info("worker stopped", "worker", g, "i", i)
				}
			})
		}
		wg.Wait()
		log.Info("Wait completed, proceeding to shutdown the manager")
		return
	case "return", "fail", "exit0":
		// The scaffold's own lines, nothing else.
		setupLog.Info("starting manager")
		setupLog.Info("serving metrics", "addr", ":8080")
		ctrl.Log.WithName("controller").Info("starting workers", "count", 2)
		switch exit {
		case "fail":
			setupLog.Error(errors.New("no kubeconfig"), "unable to start manager")
			os.Exit(1)
		case "exit0":
			setupLog.Info("stopping")
			os.Exit(0)
		}
		setupLog.Info("stopping")
		return
	}

	setupLog.Info("starting manager", "version", "v1.2.3", "leader", true)
	log := ctrl.Log.WithName("controller").WithName("pod").WithValues("namespace", "default", "attempt", 3)
	log.Info("reconciling", "spec", spec{Replicas: 2, Labels: map[string]string{"app": "web", "tier": "<front>"}, Ports: []int{80, 443}},
		"ratio", 0.25, "took", 1500*time.Millisecond, "phase", phase("Running"))
	log.V(1).Info("v1 detail", "items", []string{"a", "b"}, "nothing", nil, "count", uint8(7))
	log.V(2).Info("v2 detail", "when", time.Date(2024, 5, 17, 10, 30, 45, 123456789, time.UTC))
	log.V(3).Info("v3 detail", "err", fmt.Errorf("wrapped: %%w", errors.New("inner")))
	log.V(4).Info("v4 detail")
	log.Error(errors.New("connection refused"), "unable to reconcile", "retry", 2)
	setupLog.Error(nil, "error without an error")
	log.Info("kubernetes objects",
		"pod", &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}},
		"node", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	setupLog.Error(verboseErr{"verbose"}, "formatted error", "cause", verboseErr{"cause"})
	setupLog.WithValues("path", "C:\\tmp\\x").Info("quote \"and\" newline\n\ttab", "ctl", "\x01\x7f", "utf8", "héllo \u2028")
	ctrl.Log.Info("no name", "neg", -1.5e-9, "big", 1e21)
}
`

// scaffoldBuild holds the two binaries, built once per test binary.
var scaffoldBuild struct {
	once     sync.Once
	dir      string // removed by TestMain
	cr, ours string
	err      error
}

// TestMain removes the scaffold binaries after the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if scaffoldBuild.dir != "" {
		_ = os.RemoveAll(scaffoldBuild.dir)
	}
	os.Exit(code)
}

// buildScaffolds builds scaffoldMain twice in one temporary module, in the
// same directory, so that file names in stack traces agree: once with
// controller-runtime's zap and once with the drop-in. It builds with the
// go command's default flags (no -trimpath), as the test binary's own
// build does, so that both builds reuse the controller-runtime and
// Kubernetes packages already compiled for this test binary and only
// compile main and link: with -trimpath every package is compiled again.
func buildScaffolds(t *testing.T) (cr, ours string) {
	t.Helper()
	scaffoldBuild.once.Do(func() {
		scaffoldBuild.cr, scaffoldBuild.ours, scaffoldBuild.err = doBuildScaffolds()
	})
	require.NoError(t, scaffoldBuild.err)
	return scaffoldBuild.cr, scaffoldBuild.ours
}

func doBuildScaffolds() (cr, ours string, err error) {
	dir, err := os.MkdirTemp("", "scaffold")
	if err != nil {
		return "", "", err
	}
	scaffoldBuild.dir = dir // shared by this package's tests, removed by TestMain
	root, err := filepath.Abs("..")
	if err != nil {
		return "", "", err
	}
	// The module is the integration module under another name: same
	// requirements and sums, the library replaced by this checkout.
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return "", "", err
	}
	mod := strings.Replace(string(gomod), "module github.com/asyncbus/asyncbus/integration", "module example.com/scaffold", 1)
	mod = strings.Replace(mod, "github.com/asyncbus/asyncbus => ../", "github.com/asyncbus/asyncbus => "+root, 1)
	gosum, err := os.ReadFile("go.sum")
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644); err != nil {
		return "", "", err
	}
	build := func(importPath, out string) error {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), fmt.Appendf(nil, scaffoldMain, importPath), 0o644); err != nil {
			return err
		}
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build with %s: %w\n%s", importPath, err, b)
		}
		return nil
	}
	cr, ours = filepath.Join(dir, "crzap"), filepath.Join(dir, "ourzap")
	if err := build(crZapImport, cr); err != nil {
		return "", "", err
	}
	if err := build(ourZapImport, ours); err != nil {
		return "", "", err
	}
	return cr, ours, nil
}

// runScaffold runs bin with args and returns its stderr (where both
// loggers write by default) and exit code.
func runScaffold(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "run %s %v: %s", bin, args, stderr.String())
		code = ee.ExitCode()
	}
	return stderr.String(), code
}

var (
	jsonTS      = regexp.MustCompile(`"ts":("[^"]*"|[-+0-9.eE]+)`)
	jsonCaller  = regexp.MustCompile(`"caller":"[^"]*"`)
	consoleHead = regexp.MustCompile(`^[^\t]+\t((?:DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL|LEVEL\(-?\d+\))\t)`)
)

// normalize replaces the time and caller fields of every line, and only
// those, with placeholders.
func normalize(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "{") {
			l = jsonTS.ReplaceAllString(l, `"ts":TS`)
			lines[i] = jsonCaller.ReplaceAllString(l, `"caller":CALLER`)
			continue
		}
		lines[i] = consoleHead.ReplaceAllString(l, "TS\t$1")
	}
	return strings.Join(lines, "\n")
}

// TestScaffoldOutputMatchesControllerRuntime builds the same scaffold main
// with controller-runtime's zap and with the drop-in and compares their
// output under each flag set, timestamps and callers aside.
func TestScaffoldOutputMatchesControllerRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two controller-runtime programs")
	}
	cr, ours := buildScaffolds(t)
	for _, args := range [][]string{
		nil,
		{"-zap-devel=false"},
		{"--zap-log-level=debug"},
		{"--zap-log-level=3"},
		{"--zap-encoder=json"},
		{"--zap-stacktrace-level=info"},
		{"--zap-time-encoding=rfc3339"},
		{"--zap-time-encoding=iso8601"},
		// Beyond the list: every time encoding in both encoders,
		// production console and development JSON.
		{"-zap-devel=false", "--zap-time-encoding=epoch"},
		{"-zap-devel=false", "--zap-time-encoding=millis", "--zap-log-level=4"},
		{"--zap-time-encoding=nanos"},
		{"--zap-time-encoding=epoch"},
		{"--zap-time-encoding=rfc3339nano", "--zap-encoder=json", "--zap-log-level=2"},
		{"-zap-devel=false", "--zap-encoder=console", "--zap-stacktrace-level=info"},
		{"-zap-devel=false", "--zap-stacktrace-level=panic"},
	} {
		t.Run(strings.Join(append([]string{"args"}, args...), " "), func(t *testing.T) {
			args := append([]string{"-exit=values"}, args...)
			want, wantCode := runScaffold(t, cr, args...)
			got, gotCode := runScaffold(t, ours, args...)
			require.Equal(t, wantCode, gotCode)
			require.NotEmpty(t, want)
			assert.Equal(t, normalize(want), normalize(got), "controller-runtime:\n%s\ndrop-in:\n%s", want, got)
		})
	}
}

// TestScaffoldKeepsEveryLineAtExit runs the scaffold main built with the
// drop-in 20 times for each way a program ends, and requires every line
// in the output every time, as controller-runtime's zap keeps them:
// returning from main and a busy manager's shutdown (8 goroutines log
// 2,500 lines each at once, then main logs a last line and returns), both
// through the deferred logrbridge.Flush(ctrl.Log); os.Exit(1) after the
// scaffold's error, which runs no deferred call (the drop-in writes Error
// records before Error returns); and os.Exit(0) after a few lines, which
// the drop-in keeps because a quiet handler's calls wait briefly for
// their lines' write.
func TestScaffoldKeepsEveryLineAtExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two controller-runtime programs")
	}
	// The scaffold's setup is the drop-in's package doc's, line for line.
	doc, err := os.ReadFile(filepath.Join("..", "logrbridge", "zap", "zap.go"))
	require.NoError(t, err)
	setup := []string{"ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))", "defer logrbridge.Flush(ctrl.Log) // write every line before main returns"}
	require.Contains(t, string(doc), "\n//\t"+strings.Join(setup, "\n//\t")+"\n", "the package doc")
	require.Contains(t, scaffoldMain, "\n\t"+strings.Join(setup, "\n\t")+"\n", "the scaffold")
	cr, ours := buildScaffolds(t)
	scaffold := []string{`"msg":"starting manager"`, `"msg":"serving metrics"`, `"msg":"starting workers"`}
	for _, tc := range []struct {
		exit  string
		args  []string // production JSON, or the scaffold's default development mode
		code  int
		lines []string
	}{
		{"return", []string{"-zap-devel=false"}, 0, append(scaffold, `"msg":"stopping"`)},
		{"fail", []string{"-zap-devel=false"}, 1, append(scaffold, `"msg":"unable to start manager"`)},
		{"exit0", []string{"-zap-devel=false"}, 0, append(scaffold, `"msg":"stopping"`)},
		// Development mode: production zap samples a message repeated
		// 20,000 times a second, dropping most of controller-runtime's.
		{"shutdown", nil, 0, []string{"\tWait completed, proceeding to shutdown the manager\n"}},
	} {
		t.Run(tc.exit, func(t *testing.T) {
			args := append([]string{"-exit=" + tc.exit}, tc.args...)
			check := func(out string) (missing []string) {
				for _, l := range tc.lines {
					if !strings.Contains(out, l) {
						missing = append(missing, l)
					}
				}
				if tc.exit == "shutdown" {
					missing = append(missing, missingWorkerLines(out)...)
				}
				return missing
			}
			// The reference keeps them: the test checks what a user expects.
			out, code := runScaffold(t, cr, args...)
			require.Equal(t, tc.code, code)
			require.Empty(t, check(out), "controller-runtime")
			var missing []string
			for run := range 20 {
				out, code := runScaffold(t, ours, args...)
				require.Equal(t, tc.code, code, out)
				for _, l := range check(out) {
					missing = append(missing, fmt.Sprintf("run %d: %s", run, l))
				}
			}
			assert.Empty(t, missing, "lines lost at exit (%d)", len(missing))
		})
	}
}

// workerLine is a worker's line of -exit=shutdown in the console layout.
var workerLine = regexp.MustCompile(`\tmanager\tworker stopped\t\{"worker": (\d+), "i": (\d+)\}\n`)

// missingWorkerLines lists the lines of -exit=shutdown's 8 workers, 2,500
// each, that out lacks (each line once: a duplicate counts as missing).
func missingWorkerLines(out string) []string {
	const workers, each = 8, 2500
	seen := make(map[string]int, workers*each)
	for _, m := range workerLine.FindAllStringSubmatch(out, -1) {
		seen[m[1]+"/"+m[2]]++
	}
	var missing []string
	for g := range workers {
		for i := range each {
			if k := fmt.Sprintf("%d/%d", g, i); seen[k] != 1 {
				missing = append(missing, fmt.Sprintf("worker %d line %d seen %d times", g, i, seen[k]))
			}
		}
	}
	if len(missing) > 5 {
		missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
	}
	return missing
}

// TestFlushThroughDelegatingLogger: logrbridge.Flush(ctrl.Log) reaches the
// drop-in's handler through controller-runtime's delegating logger. The
// child process logs many lines, flushes and leaves with os.Exit(0), which
// runs no deferred code: only a Flush that reached the handler keeps them.
func TestFlushThroughDelegatingLogger(t *testing.T) {
	if os.Getenv("ASYNCBUS_FLUSH_CHILD") == "1" {
		runFlushChild()
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("re-executes the test binary with a pipe")
	}
	for range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFlushThroughDelegatingLogger$")
		cmd.Env = append(os.Environ(), "ASYNCBUS_FLUSH_CHILD=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			require.Equal(t, 0, ee.ExitCode(), stderr.String())
		}
		require.NoError(t, err, stderr.String())
		require.Equal(t, flushChildLines, strings.Count(stdout.String(), `"msg":"line"`), "every line flushed; stderr: %s", stderr.String())
		require.Contains(t, stderr.String(), "flush: <nil>")
	}
}

const flushChildLines = 2000

func runFlushChild() {
	ctrl.SetLogger(ourzap.New(ourzap.WriteTo(os.Stdout)))
	log := ctrl.Log.WithName("child")
	for i := range flushChildLines {
		log.Info("line", "i", i)
	}
	err := logrbridge.Flush(ctrl.Log)
	fmt.Fprintf(os.Stderr, "flush: %v\n", err)
	os.Exit(0)
}
