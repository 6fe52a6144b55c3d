package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// ChildEnv is the environment variable that carries a Job to a child
// process; its presence makes IsChild true.
const ChildEnv = "ASYNCBUS_BENCH_CHILD"

// Machine describes where the figures were measured.
type Machine struct {
	GOOS       string `json:"goos"`                // runtime.GOOS
	GOARCH     string `json:"goarch"`              // runtime.GOARCH
	NumCPU     int    `json:"num_cpu"`             // logical CPUs usable by the process
	GOMAXPROCS int    `json:"gomaxprocs"`          // runtime.GOMAXPROCS(0)
	GoVersion  string `json:"go_version"`          // runtime.Version()
	CPUModel   string `json:"cpu_model,omitempty"` // from /proc/cpuinfo where it exists
}

// Results is everything one Run measured.
type Results struct {
	Label       string    `json:"label,omitempty"` // Config.Label
	Shape       string    `json:"shape,omitempty"` // Config.Shape
	Machine     Machine   `json:"machine"`         // where it ran
	Started     time.Time `json:"started"`         // when Run began
	WallNS      int64     `json:"wall_ns"`         // how long Run took
	N           int       `json:"n"`               // records per run
	Goroutines  []int     `json:"goroutines"`      // goroutine counts, in table order
	Repeat      int       `json:"repeat"`          // runs per (contestant, goroutines)
	IdleNS      int64     `json:"idle_ns"`         // idle window asked for
	SampleEvery int       `json:"sample_every"`    // every k-th call timed
	Isolated    bool      `json:"isolated"`        // runs in child processes
	Contestants []string  `json:"contestants"`     // names, in table order
	Samples     []Sample  `json:"samples"`         // every successful run, in the order run
	Summaries   []Summary `json:"summaries"`       // medians, by goroutines then contestant
	// Failures lists the runs that returned an error; their samples are
	// missing from Samples.
	Failures []string `json:"failures,omitempty"`
}

// JSON returns the results as indented JSON.
func (r *Results) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// DescribeMachine returns this machine's description.
func DescribeMachine() Machine {
	return Machine{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), CPUModel: cpuModel(),
	}
}

// cpuModel reads the CPU model name from /proc/cpuinfo where it exists.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Run measures every contestant at every goroutine count cfg.Repeat times,
// in alternation, and summarises the medians. A failing run is recorded in
// Results.Failures and the others go on; the error is for a bad Config or a
// cancelled ctx.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := contestantNames(cfg.Contestants); err != nil {
		return nil, err
	}
	if cfg.Repeat < 1 {
		return nil, fmt.Errorf("harness: Repeat must be >= 1, got %d", cfg.Repeat)
	}
	if len(cfg.Goroutines) == 0 {
		return nil, fmt.Errorf("harness: no goroutine counts")
	}
	if cfg.SampleEvery == 0 {
		cfg.SampleEvery = 1
	}
	for _, g := range cfg.Goroutines {
		j := Job{N: cfg.N, Goroutines: g, SampleEvery: cfg.SampleEvery, Idle: cfg.Idle, Shape: cfg.Shape}
		if err := j.validate(); err != nil {
			return nil, err
		}
	}
	if cfg.Isolate {
		if cfg.Executable == "" {
			exe, err := os.Executable()
			if err != nil {
				exe = os.Args[0]
			}
			cfg.Executable = exe
		}
		if cfg.ChildArgs == nil {
			cfg.ChildArgs = os.Args[1:]
		}
	}
	res := &Results{
		Label: cfg.Label, Shape: cfg.Shape, Machine: DescribeMachine(), Started: time.Now(),
		N: cfg.N, Goroutines: append([]int(nil), cfg.Goroutines...), Repeat: cfg.Repeat,
		IdleNS: cfg.Idle.Nanoseconds(), SampleEvery: cfg.SampleEvery, Isolated: cfg.Isolate,
	}
	for _, c := range cfg.Contestants {
		res.Contestants = append(res.Contestants, c.Name)
	}
	total := cfg.Repeat * len(cfg.Goroutines) * len(cfg.Contestants)
	done := 0
	for rep := 1; rep <= cfg.Repeat; rep++ {
		for _, g := range cfg.Goroutines {
			for _, c := range RepOrder(cfg.Contestants, rep) {
				if err := ctx.Err(); err != nil {
					clearProgress(cfg.Progress)
					return res, err
				}
				progress(cfg.Progress, "[%d/%d] rep %d/%d  %d goroutines  %s", done+1, total, rep, cfg.Repeat, g, c.Name)
				j := Job{Contestant: c.Name, Goroutines: g, N: cfg.N, Rep: rep,
					SampleEvery: cfg.SampleEvery, Idle: cfg.Idle, TempDir: cfg.TempDir, Shape: cfg.Shape}
				var s Sample
				var err error
				if cfg.Isolate {
					s, err = runChild(ctx, cfg, j)
				} else {
					s, err = Measure(c, j)
				}
				if err != nil {
					res.Failures = append(res.Failures, fmt.Sprintf("%s, %d goroutines, rep %d: %v", c.Name, g, rep, err))
				} else {
					res.Samples = append(res.Samples, s)
				}
				done++
			}
		}
	}
	clearProgress(cfg.Progress)
	res.Summaries = Summarize(res.Samples)
	res.WallNS = time.Since(res.Started).Nanoseconds()
	return res, nil
}

// RepOrder is the order in which repeat rep (from 1) runs the contestants:
// the rows of a Williams design on their indexes. Row 0 is 0, 1, n-1, 2,
// n-2, …; row i adds i to each index (mod n); for an odd n the next n rows
// are those rows reversed. Over n repeats (2n for an odd n) every
// contestant runs once in every position and right after every other
// contestant equally often, so neither running first (right after the
// previous goroutine count) nor following a given neighbour (whose file the
// kernel may still be writing back or freeing) favours anyone; fewer
// repeats take a part of the design. Repeats beyond it start it again.
func RepOrder(cs []Contestant, rep int) []Contestant {
	n := len(cs)
	if n == 0 {
		return nil
	}
	period := n
	if n%2 == 1 {
		period = 2 * n
	}
	k := ((rep-1)%period + period) % period
	out := make([]Contestant, n)
	for j := range n {
		// Row 0 at position j: 0, 1, n-1, 2, n-2, …
		base := (j + 1) / 2
		if j%2 == 0 && j > 0 {
			base = n - j/2
		}
		pos := j
		if k >= n {
			pos = n - 1 - j // the reversed rows of an odd n
		}
		out[pos] = cs[(base+k)%n]
	}
	return out
}

// progressWidth is the width the progress line is padded to, so that a
// shorter line fully overwrites a longer one.
const progressWidth = 79

func progress(w io.Writer, format string, args ...any) {
	if w == nil {
		return
	}
	line := fmt.Sprintf(format, args...)
	if len(line) > progressWidth {
		line = line[:progressWidth]
	}
	fmt.Fprintf(w, "\r%-*s", progressWidth, line)
}

func clearProgress(w io.Writer) {
	if w != nil {
		fmt.Fprintf(w, "\r%*s\r", progressWidth, "")
	}
}

// runChild measures j in a child process and decodes its Sample.
func runChild(ctx context.Context, cfg Config, j Job) (Sample, error) {
	// The child writes into a directory of ours, so that its file is
	// removed even if it dies or is killed before its own clean-up.
	dir, err := os.MkdirTemp(j.TempDir, "asyncbus-bench-")
	if err != nil {
		return Sample{}, fmt.Errorf("harness: %w", err)
	}
	defer os.RemoveAll(dir)
	j.TempDir = dir
	spec, err := json.Marshal(j)
	if err != nil {
		return Sample{}, err
	}
	cmd := exec.CommandContext(ctx, cfg.Executable, cfg.ChildArgs...)
	cmd.Env = append(os.Environ(), ChildEnv+"="+string(spec))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Sample{}, fmt.Errorf("child process: %w: %s", err, lastLines(stderr.String(), 5))
	}
	var s Sample
	if err := json.Unmarshal(lastLine(stdout.Bytes()), &s); err != nil {
		return Sample{}, fmt.Errorf("child process output: %w (stdout %q)", err, lastLines(stdout.String(), 3))
	}
	if s.Contestant != j.Contestant || s.Goroutines != j.Goroutines || s.N != j.N {
		return Sample{}, fmt.Errorf("child process answered for %s/%d/%d, asked %s/%d/%d",
			s.Contestant, s.Goroutines, s.N, j.Contestant, j.Goroutines, j.N)
	}
	s.Isolated = true
	return s, nil
}

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\r\n\t ")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// IsChild reports whether this process was started by Run to measure one
// job (the ChildEnv variable is set). A program using Config.Isolate must
// check it early, build the same contestants, and call ServeChild.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ServeChild runs the job given in the ChildEnv variable with the named
// contestant, writes its Sample as one JSON line to stdout, and returns the
// process exit code (0 on success; 2 with a message on stderr otherwise).
func ServeChild(contestants []Contestant, stdout, stderr io.Writer) int {
	var j Job
	if err := json.Unmarshal([]byte(os.Getenv(ChildEnv)), &j); err != nil {
		fmt.Fprintf(stderr, "harness child: bad %s: %v\n", ChildEnv, err)
		return 2
	}
	for _, c := range contestants {
		if c.Name != j.Contestant {
			continue
		}
		s, err := Measure(c, j)
		if err != nil {
			fmt.Fprintf(stderr, "harness child: %v\n", err)
			return 2
		}
		b, err := json.Marshal(s)
		if err != nil {
			fmt.Fprintf(stderr, "harness child: %v\n", err)
			return 2
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			fmt.Fprintf(stderr, "harness child: %v\n", err)
			return 2
		}
		return 0
	}
	fmt.Fprintf(stderr, "harness child: unknown contestant %q\n", j.Contestant)
	return 2
}
