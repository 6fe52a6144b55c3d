package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 16, 1,4,1 ,")
	require.NoError(t, err)
	assert.Equal(t, []int{16, 1, 4}, got)
}

// TestAfterRunOnlyAfterSuccess: AfterRun (compare's -readme) publishes a run
// only if nothing failed; a contestant that loses records it may not lose
// fails the command and AfterRun is not called.
func TestAfterRunOnlyAfterSuccess(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Contestant
		wantCode int
	}{
		{"discards on purpose", Contestant{Name: "floor", New: NewNoop, Discards: true}, 0},
		{"loses every record", Contestant{Name: "loser", New: NewNoop}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			cli := &CLI{
				Name:  "test",
				Names: []string{tc.c.Name},
				Setup: func() ([]Contestant, string, error) { return []Contestant{tc.c}, "", nil },
				AfterRun: func(*Results) error {
					called = true
					return nil
				},
			}
			var stdout, stderr strings.Builder
			code := cli.Main([]string{"-n", "50", "-goroutines", "1", "-repeat", "1", "-idle", "0",
				"-isolate=false", "-quiet", "-out", ""}, &stdout, &stderr)
			require.Equal(t, tc.wantCode, code, stderr.String())
			assert.Equal(t, tc.wantCode == 0, called)
		})
	}
}
