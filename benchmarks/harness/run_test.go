package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunInProcess(t *testing.T) {
	var progress strings.Builder
	cs := testContestants()
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Contestants: cs, Goroutines: []int{1, 4}, N: 400, Repeat: 2, TempDir: dir, Progress: &progress, Label: "test run",
	})
	require.NoError(t, err)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.Empty(t, res.Failures)
	require.Len(t, res.Samples, 2*2*len(cs))
	// Alternation: each repeat visits every contestant, in RepOrder's
	// order, before the next repeat.
	var order, want []string
	for _, s := range res.Samples {
		order = append(order, fmt.Sprintf("%d/%d/%s", s.Rep, s.Goroutines, s.Contestant))
	}
	for rep := 1; rep <= 2; rep++ {
		for _, g := range []int{1, 4} {
			for _, c := range RepOrder(cs, rep) {
				want = append(want, fmt.Sprintf("%d/%d/%s", rep, g, c.Name))
			}
		}
	}
	assert.Equal(t, want, order)
	last := RepOrder(cs, 2)[len(cs)-1].Name
	require.Len(t, res.Summaries, 2*len(cs))
	for _, s := range res.Summaries {
		assert.Equal(t, 2, s.Runs)
		assert.Zero(t, s.Unaccounted, s.Contestant)
	}
	assert.Equal(t, 1, res.SampleEvery)
	assert.Equal(t, "test run", res.Label)
	assert.Contains(t, progress.String(), "\r[16/16] rep 2/2  4 goroutines  "+last)
	assert.True(t, strings.HasSuffix(progress.String(), "\r"))

	b, err := res.JSON()
	require.NoError(t, err)
	var back Results
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res.Summaries, back.Summaries)
}

// TestRepOrder: over one period of the design (n repeats for an even
// number of contestants, 2n for an odd one) every contestant runs equally
// often in every position and right after every other contestant equally
// often; the design then starts again; rep < 1 does not panic.
func TestRepOrder(t *testing.T) {
	for n := 1; n <= 12; n++ {
		cs := make([]Contestant, n)
		for i := range cs {
			cs[i] = Contestant{Name: fmt.Sprint(i)}
		}
		period := n
		if n%2 == 1 {
			period = 2 * n
		}
		position := map[[2]string]int{} // contestant, position -> times
		after := map[[2]string]int{}    // predecessor, contestant -> times
		for rep := 1; rep <= period; rep++ {
			order := RepOrder(cs, rep)
			seen := map[string]bool{}
			for i, c := range order {
				require.False(t, seen[c.Name], "n %d rep %d runs %s twice", n, rep, c.Name)
				seen[c.Name] = true
				position[[2]string{c.Name, fmt.Sprint(i)}]++
				if i > 0 {
					after[[2]string{order[i-1].Name, c.Name}]++
				}
			}
			require.Len(t, seen, n)
			assert.Equal(t, order, RepOrder(cs, rep+period), "n %d: the design repeats", n)
		}
		assert.Len(t, position, n*n, "n %d: every contestant in every position", n)
		for k, v := range position {
			assert.Equal(t, period/n, v, "n %d: %v", n, k)
		}
		if n > 1 {
			assert.Len(t, after, n*(n-1), "n %d: every contestant after every other", n)
			for k, v := range after {
				assert.Equal(t, period/n, v, "n %d: %v", n, k)
			}
		}
	}
	assert.Nil(t, RepOrder(nil, 3))
	cs := testContestants()
	names := func(cs []Contestant) (n []string) {
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return n
	}
	assert.Equal(t, names(RepOrder(cs, len(cs))), names(RepOrder(cs, 0)), "rep 0 is the period's last repeat, no panic")
}

func TestRunIsolated(t *testing.T) {
	quickRaceExit(t)
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Contestants: testContestants()[:3], Goroutines: []int{2}, N: 300, Repeat: 1, TempDir: dir,
		Isolate: true, ChildArgs: []string{"-test.run=^$"},
	})
	require.NoError(t, err)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "children's files removed")
	require.Empty(t, res.Failures)
	require.Len(t, res.Samples, 3)
	for _, s := range res.Samples {
		assert.True(t, s.Isolated)
		assert.True(t, s.Count.Verified())
		assert.Zero(t, s.Unaccounted)
		assert.Greater(t, s.PeakRSSBytes, int64(0))
	}
}

func TestRunFailuresAndValidation(t *testing.T) {
	bad := Contestant{Name: "bad", New: func(*os.File) (slog.Handler, func() error, error) { return nil, nil, errors.New("boom") }}
	res, err := Run(context.Background(), Config{Contestants: []Contestant{bad, contestant(t, "noop")}, Goroutines: []int{1}, N: 10, Repeat: 1, TempDir: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, res.Failures, 1)
	assert.Contains(t, res.Failures[0], "bad, 1 goroutines, rep 1")
	assert.Len(t, res.Samples, 1)

	t.Run("isolated child failure", func(t *testing.T) {
		quickRaceExit(t)
		dir := t.TempDir()
		res, err := Run(context.Background(), Config{Contestants: []Contestant{{Name: "unknown-in-child", New: bad.New}},
			Goroutines: []int{1}, N: 10, Repeat: 1, TempDir: dir, Isolate: true, ChildArgs: []string{"-test.run=^$"}})
		require.NoError(t, err)
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, left)
		require.Len(t, res.Failures, 1)
		assert.Contains(t, res.Failures[0], "unknown contestant")
	})

	ok := []Contestant{contestant(t, "noop")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  Config
		want string
	}{
		{"no contestants", context.Background(), Config{Goroutines: []int{1}, N: 1, Repeat: 1}, "no contestants"},
		{"duplicate", context.Background(), Config{Contestants: append(ok, ok...), Goroutines: []int{1}, N: 1, Repeat: 1}, "duplicate"},
		{"empty name", context.Background(), Config{Contestants: []Contestant{{New: ok[0].New}}, Goroutines: []int{1}, N: 1, Repeat: 1}, "invalid contestant name"},
		{"no goroutines", context.Background(), Config{Contestants: ok, N: 1, Repeat: 1}, "no goroutine"},
		{"zero repeat", context.Background(), Config{Contestants: ok, Goroutines: []int{1}, N: 1}, "Repeat"},
		{"goroutines above N", context.Background(), Config{Contestants: ok, Goroutines: []int{4}, N: 2, Repeat: 1}, "goroutines"},
		{"cancelled", ctx, Config{Contestants: ok, Goroutines: []int{1}, N: 1, Repeat: 1}, "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.ctx, tt.cfg)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestServeChildErrors(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"bad json", "{", "bad " + ChildEnv},
		{"unknown contestant", `{"contestant":"nope","goroutines":1,"n":1,"sample_every":1}`, "unknown contestant"},
		{"bad job", `{"contestant":"noop","goroutines":0,"n":1,"sample_every":1}`, "goroutines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(ChildEnv, tt.env)
			var out, errOut strings.Builder
			assert.Equal(t, 2, ServeChild(testContestants(), &out, &errOut))
			assert.Contains(t, errOut.String(), tt.want)
			assert.Empty(t, out.String())
		})
	}
	t.Run("ok", func(t *testing.T) {
		t.Setenv(ChildEnv, fmt.Sprintf(`{"contestant":"slog-json","goroutines":1,"n":5,"sample_every":1,"temp_dir":%q}`, t.TempDir()))
		var out, errOut strings.Builder
		require.Equal(t, 0, ServeChild(testContestants(), &out, &errOut), errOut.String())
		var s Sample
		require.NoError(t, json.Unmarshal([]byte(out.String()), &s))
		assert.Equal(t, int64(5), s.Count.Unique)
	})
}

// quickRaceExit stops race-enabled child processes from sleeping a second
// at exit (the race runtime's atexit_sleep_ms default), which would
// dominate the isolated runs' wall time.
func quickRaceExit(t *testing.T) {
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}
